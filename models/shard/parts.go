package shard

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math"

	"github.com/streamfit/streamfit/implicit/statsfile"
	"github.com/streamfit/streamfit/stream"
	"github.com/streamfit/streamfit/stream/columnar"
)

// Part selects the part of one input file a shard covers: a range of its
// rows (documents), a range of its row groups (record batches of an Arrow
// IPC file), or all of it. Ranges are [first, end) counted from 0; end < 0
// runs to the end of the file.
type Part struct {
	Path string
	// Rows, when set, is the range of rows (documents); the file is decoded
	// up to its end.
	Rows *[2]int64
	// Pieces, when set, is the range of row groups; only those are read.
	Pieces *[2]int64
	// Groups makes the part own whole groups of rows (the rows of one id
	// of the group column: an HMM's sequences, snapshot sets): every group
	// whose first row lies in the part, and no other. The rows of a group
	// that begins before the part are skipped, and the part is read past
	// its end to the last row of its last group, so the parts of any split
	// of a file by rows or row groups own every group exactly once (the
	// rule Hadoop's input splits follow for records across block
	// boundaries). The range recorded as the statistics' provenance stays
	// the part's. The workflows of the models that read groups set it.
	Groups bool
}

// ErrRange reports a range of row groups that cannot be read (see
// columnar.ErrRange).
var ErrRange = columnar.ErrRange

func (p Part) check() error {
	if p.Rows != nil && p.Pieces != nil {
		return fmt.Errorf("%s: a part selects rows or row groups, not both", p.Path)
	}
	return nil
}

// OpenDocs opens the documents of the part, and describes them for the
// provenance of their statistics.
func OpenDocs(p Part, o stream.Options) (stream.DocSource, statsfile.Input, error) {
	pieces := func(path string, o stream.Options, first, end int) (stream.DocSource, [2]int64, error) {
		src, err := columnar.OpenPieces(path, o, first, end)
		if err != nil {
			return nil, [2]int64{}, err
		}
		return src, src.DocRange(), nil
	}
	ranged := func(src stream.DocSource, r [2]int64) stream.DocSource { return docRange{src: src, r: r} }
	return openPart(p, o, pieces, stream.Open, ranged)
}

// OpenDense opens the sample rows of the part, and describes them for the
// provenance of their statistics. With p.Groups the rows are those of the
// groups the part owns (see Part).
func OpenDense(p Part, o stream.Options) (stream.DenseSource, statsfile.Input, error) {
	pieces := func(path string, o stream.Options, first, end int) (stream.DenseSource, [2]int64, error) {
		src, err := columnar.OpenDensePieces(path, o, first, end)
		if err != nil {
			return nil, [2]int64{}, err
		}
		if !p.Groups {
			return src, src.RowRange(), nil
		}
		// The groups of the rows of the pieces: read from the row before
		// them (the last of the piece before) to the end of the last group.
		r := src.RowRange()
		if err := src.Close(); err != nil {
			return nil, r, err
		}
		all, err := columnar.OpenDensePieces(path, o, max(first-1, 0), -1)
		if err != nil {
			return nil, r, err
		}
		return groupRange{denseRange{src: all, r: r}}, r, nil
	}
	ranged := func(src stream.DenseSource, r [2]int64) stream.DenseSource { return denseRange{src: src, r: r} }
	if p.Groups {
		ranged = func(src stream.DenseSource, r [2]int64) stream.DenseSource {
			return groupRange{denseRange{src: src, r: r}}
		}
	}
	return openPart(p, o, pieces, stream.OpenDense, ranged)
}

// openPart opens the part p of a file: its pieces by pieces (which returns
// the rows they hold), or the whole file by whole, cut to p.Rows by ranged.
func openPart[S any](p Part, o stream.Options, pieces func(string, stream.Options, int, int) (S, [2]int64, error),
	whole func(string, stream.Options) (S, error), ranged func(S, [2]int64) S) (S, statsfile.Input, error) {
	var none S
	if err := p.check(); err != nil {
		return none, statsfile.Input{}, err
	}
	desc, err := Describe(p.Path)
	if err != nil {
		return none, desc, err
	}
	if p.Pieces != nil {
		src, r, err := pieces(p.Path, o, int(p.Pieces[0]), int(p.Pieces[1]))
		if err != nil {
			return none, desc, err
		}
		desc.Docs = &r
		return src, desc, nil
	}
	src, err := whole(p.Path, o)
	if err != nil {
		return none, desc, err
	}
	if desc.Docs = p.Rows; p.Rows != nil {
		src = ranged(src, *p.Rows)
	}
	return src, desc, nil
}

// batch is a batch of documents or of sample rows.
type batch interface {
	Len() int
	Release()
}

// cutRange yields the batches of seq cut to the rows [r[0], r[1]) (r[1] < 0:
// to the end): batches outside are released and skipped, and a batch that
// crosses a bound is replaced by sub(b, lo, hi), a new batch of its rows
// [lo, hi) counted in the file. start returns a batch's first row. A range
// that is not within the rows of the file (it begins at or past the end, or
// ends past it) is an error at the end of the pass: a mistake in the shard
// plan, not a shorter shard; unit names the rows in its message.
func cutRange[B batch](ctx context.Context, seq iter.Seq2[B, error], r [2]int64, unit string, start func(B) int64, sub func(b B, lo, hi int64) B) iter.Seq2[B, error] {
	return func(yield func(B, error) bool) {
		hiR := r[1]
		if hiR < 0 {
			hiR = math.MaxInt64
		}
		var end int64 // rows seen
		for b, err := range seq {
			if err != nil {
				yield(b, err)
				return
			}
			s := start(b)
			e := s + int64(b.Len())
			end = e
			switch {
			case e <= r[0]:
				b.Release()
				continue
			case s >= hiR:
				b.Release()
				return
			}
			if lo, hi := max(s, r[0]), min(e, hiR); lo > s || hi < e {
				c := sub(b, lo, hi)
				b.Release()
				b = c
			}
			if !yield(b, nil) {
				return
			}
		}
		if err := outside(ctx, end, r, unit); err != nil {
			var none B
			yield(none, err)
		}
	}
}

// outside reports a range r that is not within the end rows (unit) of the
// input read to its end (unless ctx ended the pass).
func outside(ctx context.Context, end int64, r [2]int64, unit string) error {
	if ctx.Err() == nil && (end <= r[0] || (r[1] >= 0 && end < r[1])) {
		return fmt.Errorf("the input has %d %s: the range %s is not within them", end, unit, rangeString(r))
	}
	return nil
}

// rangeString writes a range as FIRST:END (FIRST: when it runs to the end).
func rangeString(r [2]int64) string {
	if r[1] < 0 {
		return fmt.Sprintf("%d:", r[0])
	}
	return fmt.Sprintf("%d:%d", r[0], r[1])
}

// docRange is the documents [r[0], r[1]) of src (r[1] < 0: to the end),
// read by skipping the others. Batches keep the source's boundaries, cut
// where the range begins and ends, so ranges that begin and end on the
// file's batch boundaries reduce the very batches a pass over the whole file
// does, and their statistics merge exactly to the whole file's.
type docRange struct {
	src stream.DocSource
	r   [2]int64
}

func rangeRows(rows int64, r [2]int64) int64 {
	if rows < 0 {
		return rows
	}
	hi := rows
	if r[1] >= 0 {
		hi = min(hi, r[1])
	}
	return max(0, hi-r[0])
}

func (d docRange) Info() stream.Info {
	info := d.src.Info()
	info.Rows = rangeRows(info.Rows, d.r)
	info.NNZ = -1
	return info
}

// Close closes the source read.
func (d docRange) Close() error { return stream.Close(d.src) }

func (d docRange) Docs(ctx context.Context) iter.Seq2[*stream.Docs, error] {
	return cutRange(ctx, d.src.Docs(ctx), d.r, "documents", func(b *stream.Docs) int64 { return b.Start }, func(b *stream.Docs, lo, hi int64) *stream.Docs {
		sub := stream.NewDocs(lo)
		for i := lo; i < hi; i++ {
			sub.AppendDoc(b.Doc(int(i - b.Start)))
		}
		return sub
	})
}

// denseRange is docRange for sample rows.
type denseRange struct {
	src stream.DenseSource
	r   [2]int64
}

func (d denseRange) Info() stream.Info {
	info := d.src.Info()
	info.Rows = rangeRows(info.Rows, d.r)
	return info
}

// Close closes the source read.
func (d denseRange) Close() error { return stream.Close(d.src) }

func (d denseRange) Rows(ctx context.Context) iter.Seq2[*stream.Dense, error] {
	return cutRange(ctx, d.src.Rows(ctx), d.r, "rows", func(b *stream.Dense) int64 { return b.Start }, subDense)
}

// subDense returns a new batch of the rows [lo, hi) (counted in the file)
// of b.
func subDense(b *stream.Dense, lo, hi int64) *stream.Dense {
	sub := stream.NewDense(lo, b.Cols)
	for i := lo; i < hi; i++ {
		sub.AppendRow(b.Row(int(i - b.Start)))
		if b.Group != nil {
			sub.Group = append(sub.Group, b.Group[i-b.Start])
		}
	}
	return sub
}

// groupRange is the rows of the groups of src whose first row lies in the
// rows r (r[1] < 0: to the end; see Part.Groups). src yields the rows
// from the one before r[0] (or from an earlier one) on; batches keep its
// boundaries, cut where the owned groups begin and end, so a group's rows
// are batched as in a pass over the whole file. Rows without group ids
// are each their own group: the part is then the rows r. A range not
// within the rows of the file is an error, as for cutRange.
type groupRange struct{ denseRange }

// Info describes the rows read; their number is not known before the pass.
func (g groupRange) Info() stream.Info {
	info := g.src.Info()
	info.Rows = -1
	return info
}

func (g groupRange) Rows(ctx context.Context) iter.Seq2[*stream.Dense, error] {
	return func(yield func(*stream.Dense, error) bool) {
		r0, r1 := g.r[0], g.r[1]
		if r1 < 0 {
			r1 = math.MaxInt64
		}
		var (
			end  int64 // rows seen
			id   int64 // the group of the last row seen
			seen bool  // a row was seen
			own  bool  // the part owns the group of the last row seen
		)
		for b, err := range g.src.Rows(ctx) {
			if err != nil {
				yield(b, err)
				return
			}
			s := b.Start
			end = s + int64(b.Rows)
			lo, hi := int64(-1), s // the rows of b the part owns
			done := false
			for i := s; i < end && !done; i++ {
				fresh := b.Group == nil || !seen || b.Group[i-s] != id
				if b.Group != nil {
					id, seen = b.Group[i-s], true
				}
				switch {
				case i < r0:
					continue
				case i < r1:
					own = own || fresh
				default:
					own = own && !fresh
					done = !own
				}
				if own {
					if lo < 0 {
						lo = i
					}
					hi = i + 1
				}
			}
			if lo >= 0 && (lo > s || hi < end) {
				c := subDense(b, lo, hi)
				b.Release()
				b = c
			}
			if lo < 0 {
				b.Release()
			} else if !yield(b, nil) {
				return
			}
			if done {
				return
			}
		}
		if err := outside(ctx, end, g.r, "rows"); err != nil {
			yield(nil, err)
		}
	}
}

// CoveredError refuses an append of an input (a part of a file) that the
// statistics appended to already cover; errors.Is(err, statsfile.ErrOverlap)
// holds.
type CoveredError struct {
	// Input is the input appended, As the one of the statistics that
	// covers the same rows.
	Input, As statsfile.Input
}

func (e *CoveredError) Error() string {
	return fmt.Sprintf("%v: %v: the statistics already cover it (as %v)", e.Input, statsfile.ErrOverlap, e.As)
}

// Unwrap makes errors.Is(err, statsfile.ErrOverlap) hold.
func (e *CoveredError) Unwrap() error { return statsfile.ErrOverlap }

// checkCovered refuses parts that the statistics of header h cover.
func checkCovered(h statsfile.Header, parts []Part, describe func(Part) (statsfile.Input, error)) error {
	for _, p := range parts {
		desc, err := describe(p)
		if err != nil {
			return err
		}
		if x, ok := h.Covers(desc); ok {
			return &CoveredError{Input: desc, As: x}
		}
	}
	return nil
}

// errNoBasis reports a pass that needs the statistics of the pass before.
var errNoBasis = errors.New("this pass needs the merged statistics of the pass before it as its basis")
