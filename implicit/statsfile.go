package implicit

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"hash/fnv"
	"io"
	"math"
	"os"
	"slices"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/streamfit/streamfit/stream"
	"gonum.org/v1/gonum/mat"
)

// A statistics file holds the accumulators of one pass (phase) of a fit over
// one shard of the data, or over several merged shards. Its layout is
//
//	magic    8 bytes  "SFSTATS\n"
//	version  uint32   little endian (StatsVersion)
//	hlen     uint32   length of the header
//	hcrc     uint32   CRC-32C of the header
//	header   hlen bytes of JSON (StatsHeader)
//	payload  one zstd stream of
//	           mlen uint32, mlen bytes of JSON (statsMeta: counts, shapes,
//	           vocabulary, names and lengths of the sections)
//	           sections: the arrays (M1, E2·Ω; Y3, Z, Z2, G3, G2, M1; W;
//	           the low words of the exact totals), little-endian float64 or
//	           uint64, in the order the metadata lists
//	plen     uint64   length of the compressed payload
//	crc      uint32   CRC-32C of the compressed payload
//	end      8 bytes  "SFSTEND\n"
//
// Values are stored bit for bit, so a written and re-read statistic is
// identical to the one in memory. Writer and reader stream the payload
// through the compressor section by section, so neither holds more than the
// statistics themselves and a chunk; the header is verified before anything
// is allocated from it, the payload when it has been read.
const (
	statsMagic   = "SFSTATS\n"
	statsEnd     = "SFSTEND\n"
	statsTrailer = 8 + 4 + 8 // plen, crc, end
)

// StatsVersion is the version of the statistics file layout written by
// WriteStats; ReadStats refuses any other. Version 2 stores Z2 and the
// unwhitened M1 in phase 2 (no YY) and names the kind of sketch; version 3
// is binary (sections instead of JSON numbers) and adds the exact totals
// (Exact) and the inputs covered (StatsHeader.Inputs).
const StatsVersion = 3

// Errors of ReadStats, wrapped with the file name; test with errors.Is.
var (
	ErrStatsMagic    = errors.New("not a streamfit statistics file (bad magic)")
	ErrStatsVersion  = errors.New("unsupported statistics file version")
	ErrStatsTrunc    = errors.New("statistics file is truncated")
	ErrStatsChecksum = errors.New("statistics file checksum mismatch (corrupt)")
	// ErrIncompatible reports a merge of statistics that do not describe the
	// same fit; the error is an *IncompatibleError naming the field.
	ErrIncompatible = errors.New("incompatible statistics")
)

// maxHeader bounds the header a reader accepts, so a corrupt length cannot
// make it allocate without limit.
const maxHeader = 1 << 20

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// StatsHeader says what a statistics file describes. Two files can be merged
// only when every field but Shards is equal.
type StatsHeader struct {
	// Model is "lda" or "topic" (the single-topic model), whose statistics
	// are Stats, or a dense model ("gmm", ...), whose are DenseStats.
	Model string `json:"model"`
	// Phase is the pass: for LDA 1 (sketch of the second moment, E2·Ω, or with Power > 0 a
	// power pass E2·Q) or 2 (whitened third moment for the stored whitening
	// W).
	Phase int `json:"phase"`
	// Power numbers the power passes of the randomized whitening: 0 for the
	// first sketch (Ω from Seed), i > 0 for the i-th power pass, whose
	// projection Q (stored as W) was computed from the merged statistics of
	// power pass i−1. Readers that predate it see a phase-1 file whose basis
	// is not Seed's Ω and refuse it as such.
	Power int `json:"power,omitempty"`
	// D is the vocabulary size, K the number of topics, Cols the columns of
	// the projection the pass used (Ω in phase 1, W in phase 2).
	D    int `json:"d"`
	K    int `json:"k"`
	Cols int `json:"cols"`
	// Alpha0 is LDA's α₀ (0 for the single-topic model).
	Alpha0 float64 `json:"alpha0"`
	// Seed determines Ω (phase 1) and the solver's restarts.
	Seed uint64 `json:"seed"`
	// Exact says that phase 1 multiplies by the d×d identity (exact
	// whitening); otherwise Ω is a random test matrix of the kind Sketch
	// names with K+Oversample columns.
	Exact      bool   `json:"exact"`
	Sketch     string `json:"sketch,omitempty"`
	Oversample int    `json:"oversample"`
	// VocabHash fingerprints the vocabulary (see VocabHash).
	VocabHash uint64 `json:"vocab_hash"`
	// Basis fingerprints the projection (see Fingerprint).
	Basis uint64 `json:"basis"`
	// Shards counts the shard statistics merged into this one.
	Shards int `json:"shards"`
	// Run identifies the fit a checkpoint of a pass belongs to (its input
	// and settings); empty for shard statistics.
	Run string `json:"run,omitempty"`
	// Batches is the number of batches a checkpoint without exact totals
	// holds (a resumed pass skips them); with exact totals it is
	// Exact.Batches, and 0 for shard statistics.
	Batches int64 `json:"batches,omitempty"`
	// Inputs lists the input files the statistics cover (shard.Describe);
	// merges refuse statistics that share one.
	Inputs []Input `json:"inputs,omitempty"`
	// Params are the settings of a dense model's fit that its statistics
	// depend on (the model's own JSON); statistics of different settings
	// are not merged. Empty for LDA and the single-topic model, whose
	// settings are the fields above.
	Params json.RawMessage `json:"params,omitempty"`
}

// Input describes an input file that statistics cover.
type Input struct {
	// Path is the path as given on the command line.
	Path    string    `json:"path"`
	Size    int64     `json:"size"`
	ModTime time.Time `json:"mtime"`
	// Fingerprint identifies the content cheaply: a hash of the size and
	// of the first and last 64 KiB. Two inputs with the same fingerprint
	// are taken to be the same data (a copy counts as the same file).
	Fingerprint string `json:"fingerprint"`
	// Docs, when set, is the range [Docs[0], Docs[1]) of documents of the
	// file the statistics cover (Docs[1] < 0: to the end).
	Docs *[2]int64 `json:"docs,omitempty"`
}

// overlaps reports whether a and b cover some document in common.
func (a Input) overlaps(b Input) bool {
	if a.Fingerprint != b.Fingerprint {
		return false
	}
	ra, rb := a.docs(), b.docs()
	return ra[0] < end(rb[1]) && rb[0] < end(ra[1])
}

func (a Input) docs() [2]int64 {
	if a.Docs == nil {
		return [2]int64{0, -1}
	}
	return *a.Docs
}

func end(hi int64) int64 {
	if hi < 0 {
		return math.MaxInt64
	}
	return hi
}

// String names the input and its range of documents.
func (a Input) String() string {
	if a.Docs == nil {
		return a.Path
	}
	r := *a.Docs
	if r[1] < 0 {
		return fmt.Sprintf("%s (documents %d:)", a.Path, r[0])
	}
	return fmt.Sprintf("%s (documents %d:%d)", a.Path, r[0], r[1])
}

// ErrOverlap reports a merge of statistics that cover the same input.
var ErrOverlap = errors.New("the statistics share an input, which a merge would count twice")

// Covers returns an input of h that covers documents of in (the same file
// content, overlapping ranges), if there is one.
func (h StatsHeader) Covers(in Input) (Input, bool) {
	for _, x := range h.Inputs {
		if x.overlaps(in) {
			return x, true
		}
	}
	return Input{}, false
}

// StatsPayload is the body of a statistics file: the accumulators of the
// phase and what later phases need.
type StatsPayload struct {
	// Pair holds the phase-1 sums against Ω.
	Pair *PairAcc `json:"pair,omitempty"`
	// Triple holds the phase-2 whitened sums.
	Triple *TripleAcc `json:"triple,omitempty"`
	// W is the projection of the pass when the header's seed does not
	// determine it (D×Cols, row-major): the whitening basis of phase 2, or
	// the orthonormal Q of a power pass, so that all shards of the pass,
	// and the passes and the fit after it, use the same one.
	W []float64 `json:"w,omitempty"`
	// Values are the scales D of W = Q D^{-1/2} (the eigenvalues of the
	// second moment for an exact whitening), and
	// Passes the passes phase 1 took (both reported by the fit).
	Values []float64 `json:"values,omitempty"`
	Passes int       `json:"passes,omitempty"`
	// Tail is the last singular value of the phase-1 sketch over its k-th
	// (see models.FitRecord.SketchTail); 0 for exact whitening.
	Tail float64 `json:"tail,omitempty"`
	// Negative counts the negative directions of the second moment that the
	// whitening passed over for positive ones (see lda's basis.negative).
	Negative int `json:"negative,omitempty"`
	// Vocab is the vocabulary, when the source knew it.
	Vocab []string `json:"vocab,omitempty"`
	// Exact holds the low words of the accumulator's totals (see Exact),
	// which make merges exact and independent of their order. Statistics
	// without them merge by plain float64 addition; the two are not mixed.
	Exact *Exact `json:"exact,omitempty"`
}

// Stats is one statistics file in memory.
type Stats struct {
	Header StatsHeader
	StatsPayload
}

// WMatrix returns the stored whitening basis as a D×Cols matrix (sharing
// the data), or nil when there is none.
func (s *Stats) WMatrix() *mat.Dense {
	if len(s.W) == 0 {
		return nil
	}
	return mat.NewDense(s.Header.D, s.Header.Cols, s.W)
}

// Fingerprint returns the hash of the shape and exact values of m that
// accumulators record as their Basis (never 0); it depends only on the
// values, not on how m is stored.
func Fingerprint(m mat.Matrix) uint64 {
	var c basisCache
	return c.fingerprint(m)
}

// VocabHash fingerprints a vocabulary of d words (words may be nil when
// unknown, and then only d counts).
func VocabHash(d int, words []string) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d\n", d)
	for _, w := range words {
		h.Write([]byte(w))
		h.Write([]byte{0})
	}
	return h.Sum64()
}

// IncompatibleError names the field in which two statistics differ.
type IncompatibleError struct {
	Field string
	A, B  any
}

func (e *IncompatibleError) Error() string {
	return fmt.Sprintf("%v: %s differs: %v vs %v", ErrIncompatible, e.Field, e.A, e.B)
}

// Unwrap lets errors.Is(err, ErrIncompatible) hold.
func (e *IncompatibleError) Unwrap() error { return ErrIncompatible }

// Compatible reports, as an *IncompatibleError, the first header field in
// which s and o differ (Shards excepted).
func (h StatsHeader) Compatible(o StatsHeader) error {
	type field struct {
		name string
		a, b any
	}
	fields := []field{
		{"model", h.Model, o.Model},
		{"phase", h.Phase, o.Phase},
		{"power pass", h.Power, o.Power},
		{"d (vocabulary size)", h.D, o.D},
		{"k", h.K, o.K},
		{"projection columns", h.Cols, o.Cols},
		{"alpha0", h.Alpha0, o.Alpha0},
		{"seed", h.Seed, o.Seed},
		{"exact whitening", h.Exact, o.Exact},
		{"sketch", h.Sketch, o.Sketch},
		{"oversample", h.Oversample, o.Oversample},
		{"vocabulary", fmt.Sprintf("%016x", h.VocabHash), fmt.Sprintf("%016x", o.VocabHash)},
		{"basis", fmt.Sprintf("%016x", h.Basis), fmt.Sprintf("%016x", o.Basis)},
		{"run", h.Run, o.Run},
		{"settings", string(h.Params), string(o.Params)},
	}
	for _, f := range fields {
		if f.a != f.b {
			return &IncompatibleError{Field: f.name, A: f.a, B: f.b}
		}
	}
	return nil
}

// Merge adds the statistics of o (another shard) into s. It refuses
// statistics of a different fit with an *IncompatibleError.
func (s *Stats) Merge(o *Stats) error {
	if err := s.mergeable(o, o.Exact != nil); err != nil {
		return err
	}
	if !slices.Equal(s.W, o.W) {
		return &IncompatibleError{Field: "whitening basis W", A: "stored W", B: "a different W"}
	}
	var err error
	if s.Exact != nil {
		err = s.Exact.mergeDetached(o.Exact, func() error { return s.mergeAccs(o) })
	} else {
		err = s.mergeAccs(o)
	}
	if err != nil {
		return err
	}
	s.mergeHeader(o)
	return nil
}

// mergeable reports why o (with exact totals or not) cannot be merged into
// s, if it cannot: another fit, other accumulators, plain totals with exact
// ones, or a shared input.
func (s *Stats) mergeable(o *Stats, exact bool) error {
	if err := s.Header.Compatible(o.Header); err != nil {
		return err
	}
	if (s.Pair == nil) != (o.Pair == nil) || (s.Triple == nil) != (o.Triple == nil) {
		return &IncompatibleError{Field: "accumulators", A: s.kinds(), B: o.kinds()}
	}
	if (s.Exact != nil) != exact {
		return &IncompatibleError{Field: "exact totals", A: s.Exact != nil, B: exact}
	}
	return s.Header.disjoint(o.Header)
}

// disjoint reports, as ErrOverlap, an input that o's header shares with
// h's.
func (h StatsHeader) disjoint(o StatsHeader) error {
	for _, in := range o.Inputs {
		if x, ok := h.Covers(in); ok {
			return fmt.Errorf("%w: %v and %v (fingerprint %s)", ErrOverlap, x, in, in.Fingerprint)
		}
	}
	return nil
}

// mergeHeader adds the shards and inputs of o to s's header.
func (s *Stats) mergeHeader(o *Stats) { s.Header.addShards(o.Header) }

// addShards adds the shards and inputs of o to h.
func (h *StatsHeader) addShards(o StatsHeader) {
	h.Shards += o.Shards
	// In a canonical order, so that merges in any order give the same file.
	h.Inputs = append(h.Inputs, o.Inputs...)
	slices.SortFunc(h.Inputs, func(a, b Input) int {
		return cmp.Or(cmp.Compare(a.Fingerprint, b.Fingerprint), cmp.Compare(a.docs()[0], b.docs()[0]), cmp.Compare(a.Path, b.Path))
	})
}

// mergeAccs merges o's accumulators into s's.
func (s *Stats) mergeAccs(o *Stats) error {
	if s.Pair != nil {
		if err := s.Pair.Merge(o.Pair); err != nil {
			return err
		}
	}
	if s.Triple != nil {
		return s.Triple.Merge(o.Triple)
	}
	return nil
}

func (s *Stats) kinds() string {
	switch {
	case s.Pair != nil && s.Triple != nil:
		return "pair+triple"
	case s.Pair != nil:
		return "pair"
	case s.Triple != nil:
		return "triple"
	}
	return "none"
}

// Encode writes s in the statistics file format to w, streaming: the
// payload is compressed as it is written, in chunks, and Encode stops with
// ctx's error when ctx ends (checked between chunks).
func (s *Stats) Encode(ctx context.Context, w io.Writer) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.Triple != nil && (s.Triple.KeepRows || len(s.Triple.Rows) > 0) {
		return errors.New("statistics with kept document rows (the in-memory implicit operator) are not stored in files")
	}
	hdr, err := json.Marshal(s.Header)
	if err != nil {
		return err
	}
	meta := statsMeta{Pair: shell(s.Pair, func(a *PairAcc) { a.M1, a.E2Omega = nil, nil }),
		Triple: shell(s.Triple, func(a *TripleAcc) { a.Y3, a.Z, a.Z2, a.G3, a.G2, a.M1 = nil, nil, nil, nil, nil, nil }),
		Values: s.Values, Passes: s.Passes, Tail: s.Tail, Negative: s.Negative, Vocab: s.Vocab, HasW: len(s.W) > 0}
	if s.Exact != nil {
		if meta.Exact, err = s.Exact.meta(); err != nil {
			return err
		}
	}
	secs := s.sections()
	for _, sec := range secs {
		if sec.lo != nil && len(sec.lo) != len(sec.f64) {
			return fmt.Errorf("implicit: exact totals %s of %d low words for %d values", sec.name, len(sec.lo), len(sec.f64))
		}
		meta.Sections = append(meta.Sections, sectionMeta{Name: sec.name, Len: sec.len(), Exact: sec.lo != nil})
	}
	mj, err := json.Marshal(meta)
	if err != nil {
		return fmt.Errorf("encoding statistics: %w", err)
	}
	return writeStatsFile(ctx, w, hdr, func(zw io.Writer) error {
		var buf []byte
		buf = binary.LittleEndian.AppendUint32(buf, uint32(len(mj)))
		buf = append(buf, mj...)
		for _, sec := range secs {
			for off := 0; off < sec.len(); off += sectionChunk {
				if len(buf) >= writeChunk {
					if _, err := zw.Write(buf); err != nil {
						return err
					}
					buf = buf[:0]
				}
				buf = sec.appendTo(buf, off, min(off+sectionChunk, sec.len()))
			}
		}
		_, err := zw.Write(buf)
		return err
	})
}

// writeStatsFile writes a statistics file of any model to w: the preamble
// and the header hdr, then the payload that body writes to the compressor,
// then the trailer.
func writeStatsFile(ctx context.Context, w io.Writer, hdr []byte, body func(zw io.Writer) error) error {
	var pre bytes.Buffer
	pre.WriteString(statsMagic)
	binary.Write(&pre, binary.LittleEndian, uint32(StatsVersion))
	binary.Write(&pre, binary.LittleEndian, uint32(len(hdr)))
	binary.Write(&pre, binary.LittleEndian, crc32.Checksum(hdr, crcTable))
	pre.Write(hdr)
	if _, err := w.Write(pre.Bytes()); err != nil {
		return err
	}
	cw := &crcWriter{ctx: ctx, w: w}
	zw, err := zstd.NewWriter(cw, zstd.WithEncoderConcurrency(1))
	if err != nil {
		return err
	}
	defer zw.Close()
	if err := body(zw); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	var tail [statsTrailer]byte
	binary.LittleEndian.PutUint64(tail[:], uint64(cw.n))
	binary.LittleEndian.PutUint32(tail[8:], cw.crc)
	copy(tail[12:], statsEnd)
	_, err = w.Write(tail[:])
	return err
}

// statsMeta is the first part of the payload: everything but the arrays,
// which follow as sections in the order of Sections.
type statsMeta struct {
	Pair     *PairAcc      `json:"pair,omitempty"`
	Triple   *TripleAcc    `json:"triple,omitempty"`
	Values   []float64     `json:"values,omitempty"`
	Passes   int           `json:"passes,omitempty"`
	Tail     float64       `json:"tail,omitempty"`
	Negative int           `json:"negative,omitempty"`
	Vocab    []string      `json:"vocab,omitempty"`
	HasW     bool          `json:"has_w,omitempty"`
	Exact    *exactMeta    `json:"exact,omitempty"`
	Sections []sectionMeta `json:"sections"`
}

type sectionMeta struct {
	Name  string `json:"name"`
	Len   int    `json:"len"`
	Exact bool   `json:"exact,omitempty"` // low words follow each chunk
}

// shell returns a copy of *a with its arrays cleared by clear (nil for nil).
func shell[A any](a *A, clear func(*A)) *A {
	if a == nil {
		return nil
	}
	c := *a
	clear(&c)
	return &c
}

// section is one array of the payload: float64 values and, for an exact
// total, their low words, little endian, in chunks of sectionChunk values
// each followed by their low words, so that a reader can add a section to
// exact totals chunk by chunk.
type section struct {
	name string
	f64  []float64
	lo   []uint64 // nil, or the low words of f64 (fixedArray.lo)
}

func (s section) len() int { return len(s.f64) }

// appendTo appends chunk [lo, hi) of s to buf.
func (s section) appendTo(buf []byte, lo, hi int) []byte {
	for _, v := range s.f64[lo:hi] {
		buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(v))
	}
	if s.lo != nil {
		for _, v := range s.lo[lo:hi] {
			buf = binary.LittleEndian.AppendUint64(buf, v)
		}
	}
	return buf
}

// readChunk reads the n values of a chunk of s (and their low words into
// lo when s has them) from r.
func (s section) readChunk(r io.Reader, buf []byte, v []float64, lo []uint64) error {
	n := len(v)
	if s.lo != nil {
		n *= 2
	}
	b := buf[:8*n]
	if _, err := io.ReadFull(r, b); err != nil {
		return err
	}
	for i := range v {
		v[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
	}
	if s.lo != nil {
		for i := range lo {
			lo[i] = binary.LittleEndian.Uint64(b[8*(len(v)+i):])
		}
	}
	return nil
}

// sections lists the arrays of s in the order of the file.
func (s *Stats) sections() []section {
	var out []section
	f := func(name string, v []float64) { out = append(out, section{name: name, f64: v}) }
	if a := s.Pair; a != nil {
		f("pair.m1", a.M1)
		f("pair.e2omega", a.E2Omega)
	}
	if a := s.Triple; a != nil {
		if !a.NoCubes {
			f("triple.y3", a.Y3)
		}
		f("triple.z", a.Z)
		f("triple.z2", a.Z2)
		f("triple.g3", a.G3)
		f("triple.g2", a.G2)
		f("triple.m1", a.M1)
	}
	if len(s.W) > 0 {
		f("w", s.W)
	}
	if e := s.Exact; e != nil {
		for _, a := range e.arrays {
			for i := range out {
				if out[i].name == a.name {
					out[i].lo = a.lo
				}
			}
		}
	}
	return out
}

// sectionChunk is the number of elements Encode and the reader convert at
// a time.
const sectionChunk = 8192

// crcWriter writes to w, counting the bytes and their CRC-32C, and fails
// once ctx has ended.
type crcWriter struct {
	ctx context.Context
	w   io.Writer
	n   int64
	crc uint32
}

func (c *crcWriter) Write(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	c.crc = crc32.Update(c.crc, crcTable, p[:n])
	return n, err
}

// writeChunk is how much Encode writes between checks of its context (a
// variable for tests).
var writeChunk = 1 << 20

// WriteStats writes s to path atomically: an interrupted write (ctx ended,
// an error) removes its temporary file and never leaves a file that looks
// complete; a killed one leaves only a hidden temporary file (".NAME.tmp-*"),
// which no reader opens and a later WriteStats of the same path removes
// once it is older than stream.StaleTemp.
func WriteStats(ctx context.Context, path string, s *Stats) error {
	return createStatsFile(ctx, path, s.Encode)
}

// createStatsFile writes a statistics file of any model to path atomically
// (see WriteStats), its bytes written by encode.
func createStatsFile(ctx context.Context, path string, encode func(context.Context, io.Writer) error) error {
	f, err := stream.CreateAtomic(path)
	if err != nil {
		return err
	}
	if err := encode(ctx, f); err != nil {
		f.Abort()
		return fmt.Errorf("%s: %w", path, err)
	}
	return f.Commit()
}

// ReadStats reads a statistics file, verifying magic, version, lengths and
// checksums. The payload is decompressed and decoded as a stream, straight
// into the arrays, so reading takes about one copy of the statistics.
func ReadStats(path string) (*Stats, error) {
	return openStatsFile(path, func(r io.ReaderAt, size int64) (*Stats, error) {
		return decodeStats(r, size, (*Stats).decodePayload)
	})
}

// openStatsFile decodes the statistics file at path with decode (LDA's or
// a dense model's reader); an error names the file.
func openStatsFile[S any](path string, decode func(r io.ReaderAt, size int64) (*S, error)) (*S, error) {
	var s *S
	err := withStatsFile(path, func(r io.ReaderAt, size int64) (err error) {
		s, err = decode(r, size)
		return err
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// withStatsFile calls fn with the file at path and its size; an error of
// fn is returned naming the file.
func withStatsFile(path string, fn func(r io.ReaderAt, size int64) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if err := fn(f, st.Size()); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// MergeFile adds the statistics in the file at path to s (see Merge),
// reading the file's arrays chunk by chunk and adding each to s's exact
// totals as it arrives: merging holds one copy of the statistics, s, and a
// chunk. After an error s is unusable (a damaged file is known to be damaged
// only at its end). Statistics without exact totals are read whole.
func (s *Stats) MergeFile(path string) error {
	if s.Exact == nil {
		o, err := ReadStats(path)
		if err != nil {
			return err
		}
		return s.Merge(o)
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if _, err := decodeStats(f, st.Size(), s.mergePayload); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// mergePayload reads the payload of o's file from zr and adds it to s.
func (s *Stats) mergePayload(o *Stats, zr io.Reader) error {
	meta, err := o.readMeta(zr)
	if err != nil {
		return err
	}
	if err := s.mergeable(o, meta.Exact != nil); err != nil {
		return err
	}
	if meta.HasW != (len(s.W) > 0) {
		return &IncompatibleError{Field: "whitening basis W", A: len(s.W) > 0, B: meta.HasW}
	}
	oe, err := meta.Exact.exact()
	if err != nil {
		return err
	}
	if err := s.Exact.sameArrays(oe, false); err != nil {
		return err
	}
	exact := map[string]*fixedArray{}
	for i := range s.Exact.arrays {
		a := &s.Exact.arrays[i]
		exact[a.name] = a
	}
	// o's arrays are empty (read chunk by chunk below).
	if err := detached(func() error { return s.mergeAccs(o) }, s.Exact); err != nil {
		return err
	}
	secs := s.sections()
	err = eachChunk(zr, secs, meta, func(i, off int, v []float64, lo []uint64) error {
		sec := secs[i]
		if sec.lo == nil { // W
			if !slices.Equal(sec.f64[off:off+len(v)], v) {
				return &IncompatibleError{Field: "whitening basis W", A: "stored W", B: "a different W"}
			}
			return nil
		}
		a := exact[sec.name]
		return a.addFrom(off, v, lo)
	})
	if err != nil {
		return err
	}
	s.Exact.Batches += oe.Batches
	s.mergeHeader(o)
	return nil
}

// DecodeStats parses the bytes of a statistics file.
func DecodeStats(data []byte) (*Stats, error) {
	return decodeStats(bytes.NewReader(data), int64(len(data)), (*Stats).decodePayload)
}

// decodeStats reads a statistics file of LDA or the single-topic model of
// size bytes from r: it checks and reads the header into a new Stats, lets
// payload read the decompressed payload, and checks the payload's checksum.
func decodeStats(r io.ReaderAt, size int64, payload func(*Stats, io.Reader) error) (*Stats, error) {
	s := &Stats{}
	err := readStatsFile(r, size, func(hdr []byte) error {
		if err := json.Unmarshal(hdr, &s.Header); err != nil {
			return fmt.Errorf("statistics header: %w", err)
		}
		if !TopicModel(s.Header.Model) {
			return fmt.Errorf("%w: %s statistics where LDA or single-topic statistics are read", ErrStatsModel, s.Header.Model)
		}
		return nil
	}, func(zr io.Reader) error { return payload(s, zr) })
	if err != nil {
		return nil, err
	}
	return s, nil
}

// TopicModel reports whether model names a model whose statistics are
// Stats (LDA, "lda", the single-topic model, "topic", and the checkpoints
// of their passes, "checkpoint"); every other model's are DenseStats.
func TopicModel(model string) bool {
	return model == "lda" || model == "topic" || model == "checkpoint"
}

// ErrStatsModel reports statistics of another kind of model than the
// reader's (LDA's Stats or a dense model's DenseStats).
var ErrStatsModel = errors.New("statistics of another kind of model")

// PeekModel returns the model named in the header of the statistics file
// at path, after checking the file's magic, version and header checksum.
func PeekModel(path string) (string, error) {
	var h StatsHeader
	errPeeked := errors.New("peeked")
	err := withStatsFile(path, func(r io.ReaderAt, size int64) error {
		return readStatsFile(r, size, func(hdr []byte) error {
			if err := json.Unmarshal(hdr, &h); err != nil {
				return fmt.Errorf("statistics header: %w", err)
			}
			return errPeeked
		}, nil)
	})
	if !errors.Is(err, errPeeked) {
		return "", err
	}
	return h.Model, nil
}

// readStatsFile reads a statistics file of any model, of size bytes, from
// r: it checks the preamble, hands the verified header to head, lets
// payload read the decompressed payload, and checks the payload's
// checksum. An error of head stops it.
func readStatsFile(r io.ReaderAt, size int64, head func(hdr []byte) error, payload func(zr io.Reader) error) error {
	const preLen = len(statsMagic) + 12 // magic, version, hlen, hcrc
	pre := make([]byte, preLen)
	n, _ := r.ReadAt(pre, 0)
	switch {
	case n < len(statsMagic) && bytes.HasPrefix([]byte(statsMagic), pre[:n]):
		return ErrStatsTrunc
	case !bytes.HasPrefix(pre[:n], []byte(statsMagic)):
		return ErrStatsMagic
	case n < len(statsMagic)+4:
		return ErrStatsTrunc
	}
	if v := binary.LittleEndian.Uint32(pre[len(statsMagic):]); v != StatsVersion {
		return fmt.Errorf("%w: version %d, expected %d (written by another version of streamfit; recompute the statistics)", ErrStatsVersion, v, StatsVersion)
	}
	if n < preLen {
		return ErrStatsTrunc
	}
	hlen := int64(binary.LittleEndian.Uint32(pre[len(statsMagic)+4:]))
	hcrc := binary.LittleEndian.Uint32(pre[len(statsMagic)+8:])
	if hlen > maxHeader {
		return fmt.Errorf("%w: header of %d bytes", ErrStatsChecksum, hlen)
	}
	start := int64(len(pre)) + hlen // of the compressed payload
	if size < start+statsTrailer {
		return ErrStatsTrunc
	}
	hdr := make([]byte, hlen)
	if _, err := r.ReadAt(hdr, int64(len(pre))); err != nil {
		return err
	}
	if got := crc32.Checksum(hdr, crcTable); got != hcrc {
		return fmt.Errorf("%w: header checksum stored %08x, computed %08x", ErrStatsChecksum, hcrc, got)
	}
	var tail [statsTrailer]byte
	if _, err := r.ReadAt(tail[:], size-statsTrailer); err != nil {
		return err
	}
	if string(tail[12:]) != statsEnd {
		return fmt.Errorf("%w: no end marker (cut short, or bytes after it)", ErrStatsTrunc)
	}
	plen, crc := int64(binary.LittleEndian.Uint64(tail[:])), binary.LittleEndian.Uint32(tail[8:])
	if plen != size-statsTrailer-start {
		return fmt.Errorf("%w: payload of %d bytes where the file holds %d", ErrStatsChecksum, plen, size-statsTrailer-start)
	}
	if err := head(hdr); err != nil {
		return err
	}
	cr := &crcReader{r: io.NewSectionReader(r, start, plen)}
	// The writer's window is zstd's default (8 MiB); a damaged frame header
	// claiming more is refused instead of allocated.
	zr, err := zstd.NewReader(cr, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true), zstd.WithDecoderMaxWindow(8<<20))
	if err != nil {
		return err
	}
	defer zr.Close()
	err = payload(zr)
	// The checksum covers every compressed byte, so a damaged payload is
	// reported as such whatever error decoding it gave.
	io.Copy(io.Discard, cr)
	if cr.crc != crc {
		return fmt.Errorf("%w: stored %08x, computed %08x", ErrStatsChecksum, crc, cr.crc)
	}
	if err != nil {
		return fmt.Errorf("statistics payload: %w", err)
	}
	return nil
}

// readMeta reads the metadata at the start of the payload into s (the
// accumulators without their arrays) and returns it.
func (s *Stats) readMeta(zr io.Reader) (*statsMeta, error) {
	var lb [4]byte
	if _, err := io.ReadFull(zr, lb[:]); err != nil {
		return nil, err
	}
	ml := int64(binary.LittleEndian.Uint32(lb[:]))
	if ml > maxHeader+64*int64(s.Header.D) {
		return nil, fmt.Errorf("metadata of %d bytes", ml)
	}
	mj := make([]byte, ml)
	if _, err := io.ReadFull(zr, mj); err != nil {
		return nil, err
	}
	meta := &statsMeta{}
	if err := json.Unmarshal(mj, meta); err != nil {
		return nil, err
	}
	s.Pair, s.Triple, s.Values, s.Passes, s.Tail, s.Vocab = meta.Pair, meta.Triple, meta.Values, meta.Passes, meta.Tail, meta.Vocab
	s.Negative = meta.Negative
	return meta, nil
}

// eachChunk reads the sections of the payload, which meta lists and which
// must be laid out as secs (names, lengths, low words), chunk by chunk, and
// calls fn with the index of the section, the offset of the chunk and its
// values and low words (scratch, valid during the call). It fails if
// anything follows the last section.
func eachChunk(zr io.Reader, secs []section, meta *statsMeta, fn func(i, off int, v []float64, lo []uint64) error) error {
	if len(secs) != len(meta.Sections) {
		return fmt.Errorf("statistics file is inconsistent: %d sections, expected %d", len(meta.Sections), len(secs))
	}
	buf := make([]byte, 16*sectionChunk)
	v, lo := make([]float64, sectionChunk), make([]uint64, sectionChunk)
	for i, sec := range secs {
		if m := meta.Sections[i]; m.Name != sec.name || m.Len != sec.len() || m.Exact != (sec.lo != nil) {
			return fmt.Errorf("statistics file is inconsistent: section %s of %d values (exact %t), expected %s of %d (exact %t)",
				m.Name, m.Len, m.Exact, sec.name, sec.len(), sec.lo != nil)
		}
		for off := 0; off < sec.len(); off += sectionChunk {
			n := min(sectionChunk, sec.len()-off)
			if err := sec.readChunk(zr, buf, v[:n], lo[:n]); err != nil {
				return err
			}
			if err := fn(i, off, v[:n], lo[:n]); err != nil {
				return err
			}
		}
	}
	if n, _ := io.Copy(io.Discard, zr); n != 0 {
		return fmt.Errorf("%d bytes after the last section", n)
	}
	return nil
}

// decodePayload reads the payload (statsMeta, then the sections) into s.
func (s *Stats) decodePayload(zr io.Reader) error {
	meta, err := s.readMeta(zr)
	if err != nil {
		return err
	}
	if err := s.allocate(meta.HasW); err != nil {
		return err
	}
	if meta.Exact != nil {
		e, err := meta.Exact.exact()
		if err != nil {
			return err
		}
		if err := e.bind(s.Pair, s.Triple); err != nil {
			return fmt.Errorf("statistics file is inconsistent: %w", err)
		}
		s.Exact = e
	}
	secs := s.sections()
	err = eachChunk(zr, secs, meta, func(i, off int, v []float64, lo []uint64) error {
		copy(secs[i].f64[off:], v)
		if secs[i].lo != nil {
			copy(secs[i].lo[off:], lo)
		}
		return nil
	})
	if err != nil {
		return err
	}
	// allocate and eachChunk gave every array its length; W is used as it
	// is, so it must be finite.
	if slices.ContainsFunc(s.W, func(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) }) {
		return errors.New("statistics file is inconsistent: W is not finite")
	}
	return nil
}

// allocate makes the arrays of the accumulators that the header promises,
// after checking the accumulators' shapes against it.
func (s *Stats) allocate(hasW bool) error {
	h := s.Header
	if h.D < 1 || h.Cols < 1 || h.K < 1 || h.D > maxDim || h.Cols > maxDim {
		return fmt.Errorf("statistics file is inconsistent: d=%d, k=%d, cols=%d", h.D, h.K, h.Cols)
	}
	d, c := h.D, h.Cols
	if a := s.Pair; a != nil {
		if a.D != d || a.Cols != c {
			return fmt.Errorf("statistics file is inconsistent: pair statistics of %d×%d, header %d×%d", a.D, a.Cols, d, c)
		}
		a.M1, a.E2Omega = make([]float64, d), make([]float64, d*c)
	}
	if a := s.Triple; a != nil {
		if a.D != d || a.K != c {
			return fmt.Errorf("statistics file is inconsistent: triple statistics of d=%d, k=%d, header d=%d, cols=%d", a.D, a.K, d, c)
		}
		if a.KeepRows || len(a.Rows) > 0 || len(a.InvN3) > 0 {
			return errors.New("statistics file is inconsistent: kept rows")
		}
		if !a.NoCubes {
			a.Y3 = make([]float64, c*pairs(c))
		}
		a.Z, a.Z2 = make([]float64, d*c), make([]float64, d*c)
		a.G3, a.G2, a.M1 = make([]float64, d), make([]float64, d), make([]float64, d)
	}
	if hasW {
		s.W = make([]float64, d*c)
	}
	return nil
}

// maxDim bounds the dimensions a reader accepts (the header is checksummed,
// but a bound keeps a forged one from asking for absurd memory).
const maxDim = 1 << 26

// crcReader reads from r, keeping the CRC-32C of what it read.
type crcReader struct {
	r   io.Reader
	crc uint32
}

func (c *crcReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.crc = crc32.Update(c.crc, crcTable, p[:n])
	return n, err
}
