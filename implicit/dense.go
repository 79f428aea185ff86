package implicit

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"iter"
	"math"
	"slices"

	"github.com/streamfit/streamfit/implicit/statsfile"
	"github.com/streamfit/streamfit/stream"
)

// DenseStats are the statistics of one pass of a dense model's fit (GMM,
// ICA, multi-view, Markov chains and HMMs) over one shard of the data, or
// over several merged shards: the pass's exact totals, and what the passes
// before it fixed (Fixed: a whitening, a mean, the earlier passes' totals),
// which every shard of the pass shares.
//
// The contract of every pass: a batch adds its partial sums (Pass.Run), two
// statistics of the same pass merge by adding their totals (Merge: exact,
// so any order and grouping of the same shards gives the same bytes), and
// statistics are written and read in the versioned, checksummed statistics
// file (WriteDenseStats, ReadDenseStats) with the model-agnostic header
// statsfile.Header and a section per array. Shards cut at batch boundaries give
// the totals of their union bit for bit.
type DenseStats struct {
	Header statsfile.Header
	// Rows counts the sample rows added.
	Rows int64
	// Sums are the pass's exact totals, in the order the pass lists them.
	Sums []*WideSums
	// Fixed are the arrays the passes before fixed; merges refuse
	// statistics whose Fixed differ. Header.Basis fingerprints them.
	Fixed []Fixed
}

// Fixed is a named array a pass takes as given (a basis, a mean, totals of
// an earlier pass).
type Fixed struct {
	Name   string
	Values []float64
}

// Sum returns the totals named name, rounded to float64, or nil.
func (s *DenseStats) Sum(name string) []float64 {
	for _, t := range s.Sums {
		if t.Name == name {
			return t.Floats()
		}
	}
	return nil
}

// Get returns the fixed array named name, or nil.
func (s *DenseStats) Get(name string) []float64 {
	for _, f := range s.Fixed {
		if f.Name == name {
			return f.Values
		}
	}
	return nil
}

// FixedFingerprint fingerprints the names and exact values of fixed arrays
// (never 0), for statsfile.Header.Basis.
func FixedFingerprint(fixed []Fixed) uint64 {
	h := fnv.New64a()
	var b [8]byte
	for _, f := range fixed {
		h.Write([]byte(f.Name))
		binary.LittleEndian.PutUint64(b[:], uint64(len(f.Values)))
		h.Write(b[:])
		for _, v := range f.Values {
			binary.LittleEndian.PutUint64(b[:], math.Float64bits(v))
			h.Write(b[:])
		}
	}
	return max(h.Sum64(), 1)
}

// Merge adds the statistics of o (another shard of the same pass) into s.
// It refuses statistics of another fit or pass with an *statsfile.IncompatibleError,
// and statistics that share an input with statsfile.ErrOverlap.
func (s *DenseStats) Merge(o *DenseStats) error {
	if err := s.Header.Compatible(o.Header); err != nil {
		return err
	}
	names := func(d *DenseStats) []string {
		var n []string
		for _, t := range d.Sums {
			n = append(n, fmt.Sprintf("%s[%d]", t.Name, t.Len()))
		}
		return n
	}
	if !slices.Equal(names(s), names(o)) {
		return &statsfile.IncompatibleError{Field: "sums", A: names(s), B: names(o)}
	}
	if !slices.EqualFunc(s.Fixed, o.Fixed, func(a, b Fixed) bool { return a.Name == b.Name && slices.Equal(a.Values, b.Values) }) {
		return &statsfile.IncompatibleError{Field: "basis", A: "stored basis", B: "a different basis"}
	}
	if err := s.Header.Disjoint(o.Header); err != nil {
		return err
	}
	for i, t := range s.Sums {
		if err := t.Merge(o.Sums[i]); err != nil {
			return err
		}
	}
	s.Rows += o.Rows
	s.Header.AddShards(o.Header)
	return nil
}

// BatchFunc writes the partial sums of one batch of rows into out, one
// zeroed array per total of the pass, in the pass's order. commit adds what
// out holds to the totals and zeroes it, so that a batch can add several
// partials: a partial that is a function of one group of rows alone (a set,
// whose rows may span batches) makes shards cut at any group boundary
// merge exactly. What out holds when the function returns is committed.
type BatchFunc func(b *stream.Dense, out [][]float64, commit func() error) error

// SumShape names a total of a pass and gives its length.
type SumShape struct {
	Name string
	Len  int
}

// Pass is one pass of a dense model's fit: what it sums, what it takes as
// given, and how a batch adds to it. The model builds it (from its settings
// and, after the first pass, from the merged statistics of the pass
// before); the same Pass runs over the whole data or over any shard.
type Pass struct {
	// Header is the header of the pass's statistics: Model, Phase, D, K and
	// Params from the model; Basis is set from Fixed.
	Header statsfile.Header
	Sums   []SumShape
	Fixed  []Fixed
	// Worker returns the function that adds one batch, with its own
	// scratch: Run calls it once per worker.
	Worker func() BatchFunc
	// Ordered passes run on one worker that sees the batches in order and
	// may hold state across them (the steps of a sequence); its function
	// is called once more with a nil batch when the pass ends, to check or
	// add what it holds.
	Ordered bool
}

// New returns empty statistics of the pass.
func (p *Pass) New() *DenseStats {
	s := &DenseStats{Header: p.Header, Fixed: p.Fixed}
	s.Header.Basis = FixedFingerprint(p.Fixed)
	s.Header.Shards = 1
	for _, sh := range p.Sums {
		s.Sums = append(s.Sums, NewWideSums(sh.Name, sh.Len))
	}
	return s
}

// Run computes the pass's statistics over the rows that rows yields, with
// workers goroutines; the result does not depend on workers. Memory is
// the totals and one batch's partials per worker, whatever the rows.
func (p *Pass) Run(ctx context.Context, rows func(context.Context) iter.Seq2[*stream.Dense, error], workers int) (*DenseStats, error) {
	workers = max(workers, 1)
	if p.Ordered {
		workers = 1
	}
	acc := make([]*DenseStats, workers)
	fns := make([]BatchFunc, workers)
	outs := make([][][]float64, workers)
	for w := range workers {
		acc[w] = p.New()
		fns[w] = p.Worker()
		for _, sh := range p.Sums {
			outs[w] = append(outs[w], make([]float64, sh.Len))
		}
	}
	err := stream.Each(ctx, rows, workers, func(w int, b *stream.Dense) error {
		if b.Rows == 0 {
			return nil
		}
		return p.add(acc[w], fns[w], b, outs[w])
	})
	if err == nil && p.Ordered {
		err = p.add(acc[0], fns[0], nil, outs[0])
	}
	if err != nil {
		return nil, err
	}
	for w := 1; w < workers; w++ {
		acc[0].Rows += acc[w].Rows
		for i, t := range acc[0].Sums {
			if err := t.Merge(acc[w].Sums[i]); err != nil {
				return nil, err
			}
		}
	}
	return acc[0], nil
}

// add adds the batch b (nil: the end of an ordered pass) to a by fn, with
// the partials' scratch out.
func (p *Pass) add(a *DenseStats, fn BatchFunc, b *stream.Dense, out [][]float64) error {
	for _, o := range out {
		clear(o)
	}
	commit := func() error {
		for i, t := range a.Sums {
			if err := t.Add(out[i]); err != nil {
				if b == nil {
					return fmt.Errorf("%s: %w", t.Name, err)
				}
				return fmt.Errorf("%s: rows %d..%d: %w", t.Name, b.Start, b.Start+int64(b.Rows)-1, err)
			}
			clear(out[i])
		}
		return nil
	}
	if err := fn(b, out, commit); err != nil {
		return err
	}
	if b != nil {
		a.Rows += int64(b.Rows)
	}
	return commit()
}

// denseMeta is the first part of a dense statistics file's payload.
type denseMeta struct {
	Rows  int64      `json:"rows"`
	Sums  []SumShape `json:"sums"`
	Fixed []SumShape `json:"fixed"`
}

// Encode writes s in the statistics file format to w.
func (s *DenseStats) Encode(ctx context.Context, w io.Writer) error {
	if TopicModel(s.Header.Model) || s.Header.Model == "" || s.Header.Model == EMModel {
		return fmt.Errorf("%w: dense statistics of model %q", statsfile.ErrModel, s.Header.Model)
	}
	meta := denseMeta{Rows: s.Rows}
	for _, t := range s.Sums {
		meta.Sums = append(meta.Sums, SumShape{t.Name, t.Len()})
	}
	for _, f := range s.Fixed {
		meta.Fixed = append(meta.Fixed, SumShape{f.Name, len(f.Values)})
	}
	mj, err := json.Marshal(meta)
	if err != nil {
		return err
	}
	return statsfile.Write(ctx, w, &s.Header, func(zw io.Writer) error {
		buf := binary.LittleEndian.AppendUint32(nil, uint32(len(mj)))
		buf = append(buf, mj...)
		flush := func() error {
			if len(buf) < writeChunk {
				return nil
			}
			_, err := zw.Write(buf)
			buf = buf[:0]
			return err
		}
		for _, t := range s.Sums {
			for _, l := range t.t {
				buf = binary.LittleEndian.AppendUint64(buf, l)
				if err := flush(); err != nil {
					return err
				}
			}
		}
		for _, f := range s.Fixed {
			for _, v := range f.Values {
				buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(v))
				if err := flush(); err != nil {
					return err
				}
			}
		}
		_, err := zw.Write(buf)
		return err
	})
}

// WriteDenseStats writes s to path atomically (see WriteTopicStats).
func WriteDenseStats(ctx context.Context, path string, s *DenseStats) error {
	return statsfile.Create(ctx, path, s.Encode)
}

// ReadDenseStats reads a dense model's statistics file, verifying magic,
// version, lengths and checksums.
func ReadDenseStats(path string) (*DenseStats, error) {
	return statsfile.Open(path, decodeDenseStats)
}

// DecodeDenseStats parses a dense model's statistics file held in data (as
// Encode writes it), with the checks of ReadDenseStats: the statistics a
// distributed pipeline passes between its stages.
func DecodeDenseStats(data []byte) (*DenseStats, error) {
	return decodeDenseStats(bytes.NewReader(data), int64(len(data)))
}

// decodeDenseStats reads a dense statistics file of size bytes from r.
func decodeDenseStats(r io.ReaderAt, size int64) (*DenseStats, error) {
	s := &DenseStats{}
	err := statsfile.Read(r, size, func(h *statsfile.Header) error {
		s.Header = *h
		if TopicModel(s.Header.Model) || s.Header.Model == EMModel {
			return fmt.Errorf("%w: %s statistics where a dense model's are read", statsfile.ErrModel, s.Header.Model)
		}
		return nil
	}, s.decode)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// maxDenseValues bounds the values a dense statistics file may declare.
const maxDenseValues = 1 << 31

// decode reads the payload of a dense statistics file into s.
func (s *DenseStats) decode(zr io.Reader) error {
	var lb [4]byte
	if _, err := io.ReadFull(zr, lb[:]); err != nil {
		return err
	}
	ml := binary.LittleEndian.Uint32(lb[:])
	if ml > statsfile.MaxHeader {
		return fmt.Errorf("metadata of %d bytes", ml)
	}
	mj := make([]byte, ml)
	if _, err := io.ReadFull(zr, mj); err != nil {
		return err
	}
	var meta denseMeta
	if err := json.Unmarshal(mj, &meta); err != nil {
		return err
	}
	total := 0
	for _, sh := range append(slices.Clone(meta.Sums), meta.Fixed...) {
		if sh.Len < 0 || sh.Len > maxDenseValues-total {
			return fmt.Errorf("statistics file is inconsistent: %s of %d values", sh.Name, sh.Len)
		}
		total += sh.Len
	}
	s.Rows = meta.Rows
	var b [8]byte
	for _, sh := range meta.Sums {
		t := NewWideSums(sh.Name, sh.Len)
		for i := range t.t {
			if _, err := io.ReadFull(zr, b[:]); err != nil {
				return err
			}
			t.t[i] = binary.LittleEndian.Uint64(b[:])
		}
		s.Sums = append(s.Sums, t)
	}
	for _, sh := range meta.Fixed {
		f := Fixed{Name: sh.Name, Values: make([]float64, sh.Len)}
		for i := range f.Values {
			if _, err := io.ReadFull(zr, b[:]); err != nil {
				return err
			}
			f.Values[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[:]))
		}
		s.Fixed = append(s.Fixed, f)
	}
	if n, _ := io.Copy(io.Discard, zr); n != 0 {
		return fmt.Errorf("%d bytes after the last section", n)
	}
	if FixedFingerprint(s.Fixed) != s.Header.Basis {
		return errors.New("statistics file is inconsistent: the basis does not match its fingerprint")
	}
	return nil
}

// ErrNoAppend reports an append to the statistics of a pass that depends
// on the merged pass before it over exactly its own rows: append to the
// first pass instead, then recompute the later passes over all the data.
var ErrNoAppend = errors.New("rows cannot be appended to this pass: its statistics depend on the merged pass before it over the same rows; append to pass 1 and recompute the later passes over all the data")

// Planner is a dense model's sequence of passes: the first pass for data
// of d columns, and each next pass from the merged statistics of the one
// before. A fit runs them in turn over the whole data (RunPlan); the shard
// workflow runs each over the shards and merges before asking for the next.
type Planner interface {
	// First returns the first pass for rows of d columns.
	First(d int) (*Pass, error)
	// Next returns the pass after the statistics st, or nil when st holds
	// all the fit needs.
	Next(ctx context.Context, st *DenseStats) (*Pass, error)
	// Like returns the pass whose statistics st are, with the same basis,
	// so that statistics of more rows can be added to them (an append), or
	// ErrNoAppend.
	Like(ctx context.Context, st *DenseStats) (*Pass, error)
}

// RunPlan runs the passes of p over src in turn and returns the statistics
// of the last, which hold everything the model's fit from statistics needs.
func RunPlan(ctx context.Context, src stream.DenseSource, p Planner, workers int) (*DenseStats, error) {
	d := src.Info().Cols
	if d <= 0 {
		return nil, errors.New("the source does not report its number of columns")
	}
	pass, err := p.First(d)
	if err != nil {
		return nil, err
	}
	for {
		st, err := pass.Run(ctx, src.Rows, workers)
		if err != nil {
			return nil, err
		}
		if pass, err = p.Next(ctx, st); err != nil || pass == nil {
			return st, err
		}
	}
}

// FitPlan runs the passes of p over src (RunPlan) and fits the model from
// the statistics of the last pass with fit: a fit is its statistics route
// over one shard, the whole data.
func FitPlan[M any](ctx context.Context, src stream.DenseSource, p Planner, workers int, fit func(context.Context, *DenseStats) (M, error)) (M, error) {
	st, err := RunPlan(ctx, src, p, workers)
	if err != nil {
		var none M
		return none, err
	}
	return fit(ctx, st)
}
