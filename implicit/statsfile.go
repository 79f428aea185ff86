package implicit

import (
	"bytes"
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
	"sync"

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
//	header   hlen bytes of JSON (StatsHeader)
//	plen     uint64   length of the compressed payload
//	crc      uint32   CRC-32C of header and compressed payload
//	payload  plen bytes: zstd-compressed JSON of StatsPayload
//
// JSON keeps every float64 exactly (shortest round-trip formatting), so a
// written and re-read statistic is bit-identical to the one in memory.
const statsMagic = "SFSTATS\n"

// StatsVersion is the version of the statistics file layout written by
// WriteStats; ReadStats refuses any other. Version 2 stores Z2 and the
// unwhitened M1 in phase 2 (no YY) and names the kind of sketch.
const StatsVersion = 2

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

// One encoder and one decoder serve every file: EncodeAll and DecodeAll are
// safe for concurrent use, and creating them costs more than a small file.
var (
	zstdEncoder = sync.OnceValues(func() (*zstd.Encoder, error) {
		return zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
	})
	zstdDecoder = sync.OnceValues(func() (*zstd.Decoder, error) {
		return zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
	})
)

// StatsHeader says what a statistics file describes. Two files can be merged
// only when every field but Shards is equal.
type StatsHeader struct {
	// Model is "lda" or "topic" (the single-topic model).
	Model string `json:"model"`
	// Phase is 1 (sketch of the second moment, E2·Ω) or 2 (whitened third
	// moment for the stored whitening W).
	Phase int `json:"phase"`
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
}

// StatsPayload is the body of a statistics file: the accumulators of the
// phase and what later phases need.
type StatsPayload struct {
	// Pair holds the phase-1 sums against Ω.
	Pair *PairAcc `json:"pair,omitempty"`
	// Triple holds the phase-2 whitened sums.
	Triple *TripleAcc `json:"triple,omitempty"`
	// W is the whitening basis of phase 2 (D×Cols, row-major), so all
	// shards of phase 2, and the fit, use the same one.
	W []float64 `json:"w,omitempty"`
	// Values are the scales D of W = Q D^{-1/2} (the eigenvalues of the
	// second moment for an exact whitening), and
	// Passes the passes phase 1 took (both reported by the fit).
	Values []float64 `json:"values,omitempty"`
	Passes int       `json:"passes,omitempty"`
	// Tail is the last singular value of the phase-1 sketch over its k-th
	// (see models.FitStats.SketchTail); 0 for exact whitening.
	Tail float64 `json:"tail,omitempty"`
	// Vocab is the vocabulary, when the source knew it.
	Vocab []string `json:"vocab,omitempty"`
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
	if err := s.Header.Compatible(o.Header); err != nil {
		return err
	}
	if (s.Pair == nil) != (o.Pair == nil) || (s.Triple == nil) != (o.Triple == nil) {
		return &IncompatibleError{Field: "accumulators", A: s.kinds(), B: o.kinds()}
	}
	if !slices.Equal(s.W, o.W) {
		return &IncompatibleError{Field: "whitening basis W", A: "stored W", B: "a different W"}
	}
	if s.Pair != nil {
		if err := s.Pair.Merge(o.Pair); err != nil {
			return err
		}
	}
	if s.Triple != nil {
		if err := s.Triple.Merge(o.Triple); err != nil {
			return err
		}
	}
	s.Header.Shards += o.Header.Shards
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

// Encode writes s in the statistics file format to w.
func (s *Stats) Encode(w io.Writer) error {
	hdr, err := json.Marshal(s.Header)
	if err != nil {
		return err
	}
	body, err := json.Marshal(s.StatsPayload)
	if err != nil {
		return fmt.Errorf("encoding statistics: %w", err)
	}
	enc, err := zstdEncoder()
	if err != nil {
		return err
	}
	comp := enc.EncodeAll(body, nil)
	crc := crc32.Update(crc32.Checksum(hdr, crcTable), crcTable, comp)
	var buf bytes.Buffer
	buf.WriteString(statsMagic)
	binary.Write(&buf, binary.LittleEndian, uint32(StatsVersion))
	binary.Write(&buf, binary.LittleEndian, uint32(len(hdr)))
	buf.Write(hdr)
	binary.Write(&buf, binary.LittleEndian, uint64(len(comp)))
	binary.Write(&buf, binary.LittleEndian, crc)
	if _, err := w.Write(buf.Bytes()); err != nil {
		return err
	}
	_, err = w.Write(comp)
	return err
}

// WriteStats writes s to path atomically: an interrupted write never leaves a
// file that looks complete.
func WriteStats(path string, s *Stats) error {
	f, err := stream.CreateAtomic(path)
	if err != nil {
		return err
	}
	if err := s.Encode(f); err != nil {
		f.Abort()
		return fmt.Errorf("%s: %w", path, err)
	}
	return f.Commit()
}

// ReadStats reads a statistics file, verifying magic, version, lengths and
// checksum.
func ReadStats(path string) (*Stats, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s, err := DecodeStats(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// DecodeStats parses the bytes of a statistics file.
func DecodeStats(data []byte) (*Stats, error) {
	if len(data) < len(statsMagic) {
		if bytes.HasPrefix([]byte(statsMagic), data) {
			return nil, ErrStatsTrunc
		}
		return nil, ErrStatsMagic
	}
	if string(data[:len(statsMagic)]) != statsMagic {
		return nil, ErrStatsMagic
	}
	p := data[len(statsMagic):]
	if len(p) < 8 {
		return nil, ErrStatsTrunc
	}
	if v := binary.LittleEndian.Uint32(p); v != StatsVersion {
		return nil, fmt.Errorf("%w: version %d, this program reads version %d", ErrStatsVersion, v, StatsVersion)
	}
	hlen := uint64(binary.LittleEndian.Uint32(p[4:]))
	p = p[8:]
	if hlen > maxHeader {
		return nil, fmt.Errorf("%w: header of %d bytes", ErrStatsChecksum, hlen)
	}
	if uint64(len(p)) < hlen+12 {
		return nil, ErrStatsTrunc
	}
	hdr := p[:hlen]
	p = p[hlen:]
	plen := binary.LittleEndian.Uint64(p)
	crc := binary.LittleEndian.Uint32(p[8:])
	p = p[12:]
	if uint64(len(p)) < plen {
		return nil, fmt.Errorf("%w: payload has %d of %d bytes", ErrStatsTrunc, len(p), plen)
	}
	if uint64(len(p)) > plen {
		return nil, fmt.Errorf("%w: %d bytes after the payload", ErrStatsChecksum, uint64(len(p))-plen)
	}
	if got := crc32.Update(crc32.Checksum(hdr, crcTable), crcTable, p); got != crc {
		return nil, fmt.Errorf("%w: stored %08x, computed %08x", ErrStatsChecksum, crc, got)
	}
	s := &Stats{}
	if err := json.Unmarshal(hdr, &s.Header); err != nil {
		return nil, fmt.Errorf("statistics header: %w", err)
	}
	dec, err := zstdDecoder()
	if err != nil {
		return nil, err
	}
	body, err := dec.DecodeAll(p, nil)
	if err != nil {
		return nil, fmt.Errorf("statistics payload: %w", err)
	}
	if err := json.Unmarshal(body, &s.StatsPayload); err != nil {
		return nil, fmt.Errorf("statistics payload: %w", err)
	}
	if err := s.validate(); err != nil {
		return nil, err
	}
	return s, nil
}

// validate checks that the payload has the sizes the header promises, so a
// well-formed but inconsistent file cannot panic later.
func (s *Stats) validate() error {
	h := s.Header
	bad := func(what string, got, want int) error {
		return fmt.Errorf("statistics file is inconsistent: %s has %d values, want %d", what, got, want)
	}
	if h.D < 1 || h.Cols < 1 || h.K < 1 {
		return fmt.Errorf("statistics file is inconsistent: d=%d, k=%d, cols=%d", h.D, h.K, h.Cols)
	}
	if a := s.Pair; a != nil {
		if a.D != h.D || a.Cols != h.Cols {
			return bad("pair shape", a.D*a.Cols, h.D*h.Cols)
		}
		if len(a.M1) != h.D {
			return bad("M1", len(a.M1), h.D)
		}
		if len(a.E2Omega) != h.D*h.Cols {
			return bad("E2·Ω", len(a.E2Omega), h.D*h.Cols)
		}
	}
	if a := s.Triple; a != nil {
		k, d := a.K, a.D
		if d != h.D || k != h.Cols {
			return bad("triple shape", d*k, h.D*h.Cols)
		}
		for _, c := range []struct {
			name      string
			got, want int
		}{
			{"Y3", len(a.Y3), k * pairs(k)}, {"Z", len(a.Z), d * k}, {"Z2", len(a.Z2), d * k},
			{"G3", len(a.G3), d}, {"G2", len(a.G2), d}, {"M1", len(a.M1), d},
		} {
			if c.got != c.want {
				return bad(c.name, c.got, c.want)
			}
		}
		if len(a.Rows)%k != 0 || len(a.InvN3) != len(a.Rows)/k {
			return bad("kept rows", len(a.InvN3), len(a.Rows)/k)
		}
	}
	if len(s.W) != 0 && len(s.W) != h.D*h.Cols {
		return bad("W", len(s.W), h.D*h.Cols)
	}
	for _, v := range s.W {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return errors.New("statistics file is inconsistent: W is not finite")
		}
	}
	return nil
}
