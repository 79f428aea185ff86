package lda

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/implicit/statsfile"
)

// TestEMStatsFile round-trips the statistics file of an EM pass bit for
// bit and refuses a shard given twice, statistics of another model, and a
// damaged file.
func TestEMStatsFile(t *testing.T) {
	const k, d = 3, 20
	ctx := context.Background()
	r := rand.New(rand.NewPCG(12, 13))
	p := randomParams(r, k, d, false)
	src := emCorpus(r, 50, d)
	shard := func(lo, hi int, path string) *EMStats {
		a := NewEMAcc(d, k)
		if err := a.Pass(ctx, sub(src, lo, hi).Docs, 2, p, nil); err != nil {
			t.Fatal(err)
		}
		in := statsfile.Input{Path: path, Size: int64(hi - lo), Fingerprint: path}
		return &EMStats{Header: statsfile.Header{Model: implicit.EMModel, Phase: 1, D: d, K: k, Basis: 7, Shards: 1, Inputs: []statsfile.Input{in}}, Acc: a}
	}
	a, b := shard(0, 20, "a"), shard(20, 50, "b")
	path := filepath.Join(t.TempDir(), "a.stats")
	if err := WriteEMStats(ctx, path, a); err != nil {
		t.Fatal(err)
	}
	got, err := ReadEMStats(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, a) {
		t.Fatal("EM statistics read back differ from those written")
	}
	if _, err := implicit.ReadTopicStats(path); !errors.Is(err, statsfile.ErrModel) {
		t.Errorf("EM statistics read as LDA's: %v", err)
	}
	if _, err := implicit.ReadDenseStats(path); !errors.Is(err, statsfile.ErrModel) {
		t.Errorf("EM statistics read as a dense model's: %v", err)
	}
	if err := got.Merge(b); err != nil {
		t.Fatal(err)
	}
	if err := got.Merge(shard(20, 50, "b")); !errors.Is(err, statsfile.ErrOverlap) {
		t.Errorf("a shard given twice: %v", err)
	}
	other := shard(0, 20, "c")
	other.Header.Basis = 8
	if err := got.Merge(other); !errors.Is(err, statsfile.ErrIncompatible) {
		t.Errorf("statistics of another model: %v", err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)-30] ^= 1
	if _, err := DecodeEMStats(data); !errors.Is(err, statsfile.ErrChecksum) {
		t.Errorf("damaged file: %v", err)
	}
}
