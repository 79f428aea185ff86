package implicit

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/streamfit/streamfit/implicit/statsfile"
	"gonum.org/v1/gonum/mat"
)

// TopicPayload is the body of a statistics file: the accumulators of the
// phase and what later phases need.
type TopicPayload struct {
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

// TopicStats is one statistics file in memory.
type TopicStats struct {
	Header statsfile.Header
	TopicPayload
}

// WMatrix returns the stored whitening basis as a D×Cols matrix (sharing
// the data), or nil when there is none.
func (s *TopicStats) WMatrix() *mat.Dense {
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

// Merge adds the statistics of o (another shard) into s. It refuses
// statistics of a different fit with an *statsfile.IncompatibleError.
func (s *TopicStats) Merge(o *TopicStats) error {
	if err := s.mergeable(o, o.Exact != nil); err != nil {
		return err
	}
	if !slices.Equal(s.W, o.W) {
		return &statsfile.IncompatibleError{Field: "whitening basis W", A: "stored W", B: "a different W"}
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
	s.Header.AddShards(o.Header)
	return nil
}

// mergeable reports why o (with exact totals or not) cannot be merged into
// s, if it cannot: another fit, other accumulators, plain totals with exact
// ones, or a shared input.
func (s *TopicStats) mergeable(o *TopicStats, exact bool) error {
	if err := s.Header.Compatible(o.Header); err != nil {
		return err
	}
	if (s.Pair == nil) != (o.Pair == nil) || (s.Triple == nil) != (o.Triple == nil) {
		return &statsfile.IncompatibleError{Field: "accumulators", A: s.kinds(), B: o.kinds()}
	}
	if (s.Exact != nil) != exact {
		return &statsfile.IncompatibleError{Field: "exact totals", A: s.Exact != nil, B: exact}
	}
	return s.Header.Disjoint(o.Header)
}

// mergeAccs merges o's accumulators into s's.
func (s *TopicStats) mergeAccs(o *TopicStats) error {
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

func (s *TopicStats) kinds() string {
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
func (s *TopicStats) Encode(ctx context.Context, w io.Writer) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.Triple != nil && (s.Triple.KeepRows || len(s.Triple.Rows) > 0) {
		return errors.New("statistics with kept document rows (the in-memory implicit operator) are not stored in files")
	}
	meta := statsMeta{Pair: shell(s.Pair, func(a *PairAcc) { a.M1, a.E2Omega = nil, nil }),
		Triple: shell(s.Triple, func(a *TripleAcc) { a.Y3, a.CubeSq, a.Z, a.Z2, a.G3, a.G2, a.M1 = nil, nil, nil, nil, nil, nil, nil }),
		Values: s.Values, Passes: s.Passes, Tail: s.Tail, Negative: s.Negative, Vocab: s.Vocab, HasW: len(s.W) > 0}
	if s.Exact != nil {
		var err error
		if meta.Exact, err = s.Exact.meta(); err != nil {
			return err
		}
	}
	secs := s.sections()
	for _, sec := range secs {
		if sec.Lo != nil && len(sec.Lo) != len(sec.F64) {
			return fmt.Errorf("implicit: exact totals %s of %d low words for %d values", sec.Name, len(sec.Lo), len(sec.F64))
		}
		meta.Sections = append(meta.Sections, sec.Meta())
	}
	mj, err := json.Marshal(meta)
	if err != nil {
		return fmt.Errorf("encoding statistics: %w", err)
	}
	return statsfile.Write(ctx, w, &s.Header, func(zw io.Writer) error {
		head := binary.LittleEndian.AppendUint32(nil, uint32(len(mj)))
		return statsfile.WriteSections(zw, append(head, mj...), secs, writeChunk)
	})
}

// statsMeta is the first part of the payload: everything but the arrays,
// which follow as sections (statsfile.Section) in the order of Sections.
type statsMeta struct {
	Pair     *PairAcc                `json:"pair,omitempty"`
	Triple   *TripleAcc              `json:"triple,omitempty"`
	Values   []float64               `json:"values,omitempty"`
	Passes   int                     `json:"passes,omitempty"`
	Tail     float64                 `json:"tail,omitempty"`
	Negative int                     `json:"negative,omitempty"`
	Vocab    []string                `json:"vocab,omitempty"`
	HasW     bool                    `json:"has_w,omitempty"`
	Exact    *exactMeta              `json:"exact,omitempty"`
	Sections []statsfile.SectionMeta `json:"sections"`
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

// sections lists the arrays of s in the order of the file.
func (s *TopicStats) sections() []statsfile.Section {
	var out []statsfile.Section
	f := func(name string, v []float64) { out = append(out, statsfile.Section{Name: name, F64: v}) }
	if a := s.Pair; a != nil {
		f("pair.m1", a.M1)
		f("pair.e2omega", a.E2Omega)
	}
	if a := s.Triple; a != nil {
		if !a.NoCubes {
			f("triple.y3", a.Y3)
		}
		if a.CubeSq != nil {
			f("triple.cubesq", a.CubeSq)
		}
		f("triple.z", a.Z)
		if !a.NoPair {
			f("triple.z2", a.Z2)
		}
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
				if out[i].Name == a.name {
					out[i].Lo = a.lo
				}
			}
		}
	}
	return out
}

// writeChunk is how much Encode writes between checks of its context (a
// variable for tests).
var writeChunk = 1 << 20

// WriteTopicStats writes s to path atomically: an interrupted write (ctx ended,
// an error) removes its temporary file and never leaves a file that looks
// complete; a killed one leaves only a hidden temporary file (".NAME.tmp-*"),
// which no reader opens and a later WriteTopicStats of the same path removes
// once it is older than stream.StaleTemp.
func WriteTopicStats(ctx context.Context, path string, s *TopicStats) error {
	return statsfile.Create(ctx, path, s.Encode)
}

// ReadTopicStats reads a statistics file, verifying magic, version, lengths and
// checksums. The payload is decompressed and decoded as a stream, straight
// into the arrays, so reading takes about one copy of the statistics.
func ReadTopicStats(path string) (*TopicStats, error) {
	return statsfile.Open(path, func(r io.ReaderAt, size int64) (*TopicStats, error) {
		return decodeStats(r, size, (*TopicStats).decodePayload)
	})
}

// MergeFile adds the statistics in the file at path to s (see Merge),
// reading the file's arrays chunk by chunk and adding each to s's exact
// totals as it arrives: merging holds one copy of the statistics, s, and a
// chunk. After an error s is unusable (a damaged file is known to be damaged
// only at its end). Statistics without exact totals are read whole.
func (s *TopicStats) MergeFile(path string) error {
	if s.Exact == nil {
		o, err := ReadTopicStats(path)
		if err != nil {
			return err
		}
		return s.Merge(o)
	}
	return statsfile.With(path, func(r io.ReaderAt, size int64) error {
		_, err := decodeStats(r, size, s.mergePayload)
		return err
	})
}

// mergePayload reads the payload of o's file from zr and adds it to s.
func (s *TopicStats) mergePayload(o *TopicStats, zr io.Reader) error {
	meta, err := o.readMeta(zr)
	if err != nil {
		return err
	}
	if err := s.mergeable(o, meta.Exact != nil); err != nil {
		return err
	}
	if meta.HasW != (len(s.W) > 0) {
		return &statsfile.IncompatibleError{Field: "whitening basis W", A: len(s.W) > 0, B: meta.HasW}
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
	err = statsfile.ReadSections(zr, secs, meta.Sections, func(i, off int, v []float64, lo []uint64) error {
		sec := secs[i]
		if sec.Lo == nil { // W
			if !slices.Equal(sec.F64[off:off+len(v)], v) {
				return &statsfile.IncompatibleError{Field: "whitening basis W", A: "stored W", B: "a different W"}
			}
			return nil
		}
		a := exact[sec.Name]
		return a.addFrom(off, v, lo)
	})
	if err != nil {
		return err
	}
	s.Exact.Batches += oe.Batches
	s.Header.AddShards(o.Header)
	return nil
}

// DecodeTopicStats parses the bytes of a statistics file.
func DecodeTopicStats(data []byte) (*TopicStats, error) {
	return decodeStats(bytes.NewReader(data), int64(len(data)), (*TopicStats).decodePayload)
}

// decodeStats reads a statistics file of LDA or the single-topic model of
// size bytes from r: it checks and reads the header into a new TopicStats, lets
// payload read the decompressed payload, and checks the payload's checksum.
func decodeStats(r io.ReaderAt, size int64, payload func(*TopicStats, io.Reader) error) (*TopicStats, error) {
	s := &TopicStats{}
	err := statsfile.Read(r, size, func(h *statsfile.Header) error {
		s.Header = *h
		if !TopicModel(s.Header.Model) {
			return fmt.Errorf("%w: %s statistics where LDA or single-topic statistics are read", statsfile.ErrModel, s.Header.Model)
		}
		return nil
	}, func(zr io.Reader) error { return payload(s, zr) })
	if err != nil {
		return nil, err
	}
	return s, nil
}

// TopicModel reports whether model names a model whose statistics are
// TopicStats (LDA, "lda", the single-topic model, "topic", and the checkpoints
// of their passes, "checkpoint"); every other model's are DenseStats, but
// EMModel's. The readers of TopicStats and DenseStats dispatch on it, so
// it is declared here: models/lda and the models registry import this
// package and cannot supply it.
func TopicModel(model string) bool {
	return model == "lda" || model == "topic" || model == "checkpoint"
}

// EMModel is the model a statistics file of a topic model's EM pass names
// in its header (statsfile.Header.Model): its statistics are lda.EMStats,
// whatever the topic model ("lda" or "topic", in the header's Params), and
// the readers of TopicStats and DenseStats refuse it.
const EMModel = "em"

// readMeta reads the metadata at the start of the payload into s (the
// accumulators without their arrays) and returns it.
func (s *TopicStats) readMeta(zr io.Reader) (*statsMeta, error) {
	var lb [4]byte
	if _, err := io.ReadFull(zr, lb[:]); err != nil {
		return nil, err
	}
	ml := int64(binary.LittleEndian.Uint32(lb[:]))
	if ml > statsfile.MaxHeader+64*int64(s.Header.D) {
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

// decodePayload reads the payload (statsMeta, then the sections) into s.
func (s *TopicStats) decodePayload(zr io.Reader) error {
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
	err = statsfile.ReadSections(zr, secs, meta.Sections, func(i, off int, v []float64, lo []uint64) error {
		copy(secs[i].F64[off:], v)
		if secs[i].Lo != nil {
			copy(secs[i].Lo[off:], lo)
		}
		return nil
	})
	if err != nil {
		return err
	}
	// allocate and ReadSections gave every array its length; W is used as it
	// is, so it must be finite.
	if slices.ContainsFunc(s.W, func(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) }) {
		return errors.New("statistics file is inconsistent: W is not finite")
	}
	return nil
}

// allocate makes the arrays of the accumulators that the header promises,
// after checking the accumulators' shapes against it.
func (s *TopicStats) allocate(hasW bool) error {
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
		a.CubeSq = nil
		a.sampleSums()
		a.Z, a.Z2 = make([]float64, d*c), nil
		if !a.NoPair {
			a.Z2 = make([]float64, d*c)
		}
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
