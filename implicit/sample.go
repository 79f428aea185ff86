package implicit

import "math"

// DocSample is a seeded sample of a source's documents by their index in
// it (the batches' Start plus the position in the batch): document i is in
// the sample when a hash of (i, Seed) falls below Rate. The sample does not
// depend on how the documents are cut into batches, shards or workers, so
// every process that reads a document decides alike. The zero value (or a
// Rate of 1 or more) holds every document.
type DocSample struct {
	Rate float64 `json:"rate"`
	Seed uint64  `json:"seed"`
}

// All reports whether s holds every document.
func (s DocSample) All() bool { return !(s.Rate > 0 && s.Rate < 1) }

// Keeps returns the membership test of s (computed once: call it per
// document).
func (s DocSample) Keeps() func(doc int64) bool {
	if s.All() {
		return func(int64) bool { return true }
	}
	thr, seed := uint64(math.Ldexp(s.Rate, 64)), s.Seed
	return func(doc int64) bool { return sampleHash(doc, seed) < thr }
}

// sampleHash is the hash of document doc under seed: splitmix64's
// finaliser of the index and the seed, each odd-multiplied first.
func sampleHash(doc int64, seed uint64) uint64 {
	z := uint64(doc)*0x9e3779b97f4a7c15 + seed*0xbf58476d1ce4e5b9 + 0x94d049bb133111eb
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}
