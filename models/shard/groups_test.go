package shard

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/models/hmm"
	"github.com/streamfit/streamfit/models/markov"
	"github.com/streamfit/streamfit/stream"
	"github.com/streamfit/streamfit/stream/synth"
)

// groupedFile writes the rows of src to a Parquet file in row groups of
// groupRows rows, with new group ids: groups of 3, 4, ..., 12 rows in turn,
// except the rows [long[0], long[1]), one group longer than a shard.
// (The last group, if cut short, joins the one before.)
func groupedFile(t *testing.T, src stream.DenseSource, groupRows int, long [2]int64) string {
	t.Helper()
	ctx := context.Background()
	all, err := stream.CollectDense(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]int64, all.Rows)
	var id, left int64
	for i := range ids {
		r := int64(i)
		switch {
		case r == long[0]:
			id, left = id+1, long[1]-long[0]
		case left == 0:
			id, left = id+1, 3+id%10
		}
		ids[i], left = id, left-1
	}
	for i := len(ids) - 1; left > 0 && ids[i] == id; i-- {
		ids[i] = id - 1 // the last group, cut short, joins the one before
	}
	all.Group = ids
	path := filepath.Join(t.TempDir(), "grouped.parquet")
	w, err := stream.CreateDense(path, stream.WriteOptions{RowGroupRows: groupRows})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(all); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// body encodes st without its provenance (inputs, shard count).
func body(t *testing.T, st *implicit.DenseStats) []byte {
	t.Helper()
	c := *st
	c.Header.Inputs, c.Header.Shards = nil, 0
	var buf bytes.Buffer
	if err := c.Encode(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// merged merges the statistics of shards in the order given.
func merged(t *testing.T, shards []*implicit.DenseStats, order []int) *implicit.DenseStats {
	t.Helper()
	var total *implicit.DenseStats
	for _, i := range order {
		c := *shards[i]
		c.Sums = nil
		for _, s := range shards[i].Sums {
			w := implicit.NewWideSums(s.Name, s.Len())
			if err := w.Merge(s); err != nil {
				t.Fatal(err)
			}
			c.Sums = append(c.Sums, w)
		}
		if total == nil {
			total = &c
		} else if err := total.Merge(&c); err != nil {
			t.Fatal(err)
		}
	}
	return total
}

// The shards of a file whose sequences (sets) are cut by the shards' row
// ranges and row groups own every group whose first row lies in them: both
// passes of hmm (first steps and windows), markov and hmm-snapshot merge,
// in either order, to exactly the whole file's statistics. A shard within
// one long group owns nothing and has empty statistics; without whole
// groups the same split does not give the whole file's statistics.
func TestGroupedShardsExact(t *testing.T) {
	ctx := context.Background()
	const groupRows, batchRows = 250, 100
	// Rows 760..2299 are one group: the shards 1000:1500 (row groups 4:6)
	// and 1500:2000 lie within it.
	long := [2]int64{760, 2300}
	seqs, err := synth.NewHMMSeq(synth.HMMSeqConfig{Seqs: 300, Len: 10, K: 3, D: 6, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	snaps, err := synth.NewSnapshots(synth.SnapshotConfig{Sets: 30, PerSet: 100, K: 3, M: 6, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	chain, err := synth.NewSnapshots(synth.SnapshotConfig{Sets: 60, PerSet: 100, K: 3, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		src  stream.DenseSource
		wf   Dense
	}{
		{"hmm", seqs, DenseOf(hmm.Kind.Passes(hmm.Config{K: 3}))},
		{"hmm-windows", seqs, DenseOf(hmm.Kind.Passes(hmm.Config{K: 3, Windows: true}))},
		{"hmm-snapshot", snaps, DenseOf(markov.HMMKind.Passes(markov.Config{K: 3, Alpha0: 1}))},
		{"markov", chain, DenseOf(markov.ChainKind.Passes(markov.Config{K: 3, Alpha0: 1}))},
	}
	rows := func(lo, hi int64) Part { return Part{Rows: &[2]int64{lo, hi}} }
	pieces := func(lo, hi int64) Part { return Part{Pieces: &[2]int64{lo, hi}} }
	splits := map[string][]Part{
		// 700 is a batch boundary inside a group (row group 2 is 500..749).
		"row ranges": {rows(0, 700), rows(700, 1000), rows(1000, 1500), rows(1500, 2000), rows(2000, -1)},
		// Row groups of 250 rows cut groups of 3..12 rows.
		"row groups": {pieces(0, 3), pieces(3, 4), pieces(4, 6), pieces(6, 8), pieces(8, -1)},
	}
	o := stream.Options{BatchRows: batchRows, Workers: 2, GroupColumn: "group"}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := groupedFile(t, c.src, groupRows, long)
			// Row groups beyond the file's are refused, as without groups.
			if _, err := c.wf.Stats(ctx, []Part{{Path: path, Pieces: &[2]int64{40, 42}}}, o, nil); !errors.Is(err, ErrRange) {
				t.Errorf("row groups 40:42 of a file of fewer: %v", err)
			}
			var whole *implicit.DenseStats
			bases := map[string]*implicit.DenseStats{}
			for pass := 1; pass <= 2; pass++ {
				if whole, err = c.wf.Stats(ctx, []Part{{Path: path}}, o, whole); err != nil {
					t.Fatal(err)
				}
				want := body(t, whole)
				for name, parts := range splits {
					var shards []*implicit.DenseStats
					for i, p := range parts {
						p.Path = path
						st, err := c.wf.Stats(ctx, []Part{p}, o, bases[name])
						if err != nil {
							t.Fatalf("pass %d, %s, shard %d: %v", pass, name, i, err)
						}
						if (i == 2 || i == 3) && st.Rows != 0 {
							t.Errorf("pass %d, %s: shard %d lies within one group but has %d rows", pass, name, i, st.Rows)
						}
						shards = append(shards, st)
					}
					ab := merged(t, shards, []int{0, 1, 2, 3, 4})
					ba := merged(t, shards, []int{4, 2, 0, 3, 1})
					if !bytes.Equal(body(t, ab), body(t, ba)) {
						t.Errorf("pass %d, %s: the merges in two orders differ", pass, name)
					}
					if !bytes.Equal(body(t, ab), want) {
						t.Errorf("pass %d, %s: the merged statistics differ from the whole file's", pass, name)
					}
					if ab.Rows != whole.Rows {
						t.Errorf("pass %d, %s: %d rows merged, %d in the file", pass, name, ab.Rows, whole.Rows)
					}
					bases[name] = ab
				}
			}
			// Without whole groups a cut group counts as two, or its pieces
			// are refused: the test above can fail.
			plain := Dense{Plan: c.wf.Plan}
			var shards []*implicit.DenseStats
			for _, p := range splits["row ranges"] {
				p.Path = path
				st, err := plain.Stats(ctx, []Part{p}, o, nil)
				if err != nil {
					return
				}
				shards = append(shards, st)
			}
			first, err := c.wf.Stats(ctx, []Part{{Path: path}}, o, nil)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Equal(body(t, merged(t, shards, []int{0, 1, 2, 3, 4})), body(t, first)) {
				t.Error("shards that cut groups in two give the whole file's statistics without whole groups")
			}
		})
	}
}

// A row range that is not within the file's rows is an error with whole
// groups too, and a range within one group owns nothing.
func TestGroupRangeBounds(t *testing.T) {
	ctx := context.Background()
	g, err := synth.NewHMMSeq(synth.HMMSeqConfig{Seqs: 100, Len: 10, K: 2, D: 3, Seed: 1, BatchRows: 64})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range [][2]int64{{150, 1234}, {1000, -1}, {1000, 1001}} {
		if _, err := stream.CollectDense(ctx, groupRange{denseRange{src: g, r: r}}); err == nil {
			t.Errorf("range %v of 1000 rows: no error", r)
		}
	}
	for _, c := range []struct {
		r      [2]int64
		lo, hi int64 // the rows owned
	}{
		{[2]int64{0, -1}, 0, 1000}, {[2]int64{0, 1}, 0, 10}, {[2]int64{1, 9}, 10, 10}, {[2]int64{5, 25}, 10, 30},
		{[2]int64{10, 20}, 10, 20}, {[2]int64{60, 70}, 60, 70}, {[2]int64{63, 65}, 70, 70}, {[2]int64{995, -1}, 1000, 1000},
	} {
		var got []int64
		for b, err := range (groupRange{denseRange{src: g, r: c.r}}).Rows(ctx) {
			if err != nil {
				t.Fatal(err)
			}
			for i := range b.Rows {
				if b.Group[i] != (b.Start+int64(i))/10 {
					t.Fatalf("range %v: row %d has group %d", c.r, b.Start+int64(i), b.Group[i])
				}
				got = append(got, b.Start+int64(i))
			}
			b.Release()
		}
		want := c.hi - c.lo
		if int64(len(got)) != want || (want > 0 && (got[0] != c.lo || got[len(got)-1] != c.hi-1)) {
			t.Errorf("range %v: rows %s, want %d..%d", c.r, fmt.Sprint(got[:min(len(got), 3)]), c.lo, c.hi-1)
		}
	}
}
