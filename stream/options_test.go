package stream

import (
	"math"
	"testing"
)

// The cut by entries: on by default, off when BatchRows is set without
// BatchEntries or with a negative one; ceil(BatchEntries / mean entries) rows
// within [BatchRows, MaxBatchGrowth × BatchRows]; large counts do not
// overflow; WithDefaults keeps its own result.
func TestRunRows(t *testing.T) {
	def := Options{}.WithDefaults()
	cases := []struct {
		name    string
		o       Options
		n, nnz  int64
		want    int
		entries int // the BatchEntries WithDefaults gives
	}{
		{"default, short documents", Options{}, 280000, 280000 * 64, 8192, DefaultBatchEntries},
		{"default, long documents keep BatchRows", Options{}, 250000, 250000 * 189, DefaultBatchRows, DefaultBatchEntries},
		{"default, very short documents at the cap", Options{}, 1000, 1000, DefaultBatchRows * MaxBatchGrowth, DefaultBatchEntries},
		{"default, no entries", Options{}, 1000, 0, DefaultBatchRows * MaxBatchGrowth, DefaultBatchEntries},
		{"BatchRows set: off", Options{BatchRows: 100}, 1000, 1000, 100, -1},
		{"BatchRows and BatchEntries set", Options{BatchRows: 20, BatchEntries: 2000}, 250, 250 * 36, 56, 2000},
		{"off", Options{BatchEntries: -1}, 1000, 1000, DefaultBatchRows, -1},
		{"huge counts", Options{BatchRows: math.MaxInt32, BatchEntries: math.MaxInt64}, math.MaxInt64, math.MaxInt64, math.MaxInt32 * MaxBatchGrowth, math.MaxInt64},
		{"empty piece", Options{}, 0, 0, DefaultBatchRows, DefaultBatchEntries},
	}
	for _, c := range cases {
		o := c.o.WithDefaults()
		if o.BatchEntries != c.entries {
			t.Errorf("%s: BatchEntries %d, want %d", c.name, o.BatchEntries, c.entries)
		}
		if again := o.WithDefaults(); again.BatchRows != o.BatchRows || again.BatchEntries != o.BatchEntries {
			t.Errorf("%s: WithDefaults changes its own result", c.name)
		}
		if got := o.RunRows(c.n, c.nnz); got != c.want {
			t.Errorf("%s: RunRows(%d, %d) = %d, want %d", c.name, c.n, c.nnz, got, c.want)
		}
	}
	if def.BatchRows != DefaultBatchRows || def.BatchEntries != DefaultBatchEntries {
		t.Errorf("defaults: %d rows, %d entries", def.BatchRows, def.BatchEntries)
	}
}
