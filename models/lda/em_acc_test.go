package lda

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/streamfit/streamfit/implicit/statsfile"
	"github.com/streamfit/streamfit/internal/sysinfo"
	"github.com/streamfit/streamfit/stream"
	"github.com/streamfit/streamfit/stream/synth"
)

// emCorpus draws n documents of 0–7 distinct words over d words, in
// batches of 7.
func emCorpus(r *rand.Rand, n, d int) *stream.MemoryDocs {
	all := stream.NewDocs(0)
	for range n {
		for _, w := range r.Perm(d)[:r.IntN(8)] {
			all.Add(int32(w), int32(1+r.IntN(4)))
		}
		all.EndDoc()
	}
	return &stream.MemoryDocs{All: all.Clone(), Terms: d, BatchRows: 7}
}

// sub is the documents [lo, hi) of m, in batches of 7.
func sub(m *stream.MemoryDocs, lo, hi int) *stream.MemoryDocs {
	b := stream.NewDocs(int64(lo))
	for i := lo; i < hi; i++ {
		b.AppendDoc(m.All.Doc(i))
	}
	return &stream.MemoryDocs{All: b.Clone(), Terms: m.Terms, BatchRows: 7}
}

func TestEMAccWorkersAndMerge(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	const k, d = 4, 30
	for _, single := range []bool{false, true} {
		p := randomParams(r, k, d, single)
		src := emCorpus(r, 200, d)
		var accs []*EMAcc
		for _, workers := range []int{1, 3} {
			a := NewEMAcc(d, k)
			if err := a.Pass(context.Background(), src.Docs, workers, p, nil); err != nil {
				t.Fatal(err)
			}
			accs = append(accs, a)
		}
		a, b := accs[0], accs[1]
		if a.Bound != b.Bound || a.Docs != b.Docs {
			t.Fatalf("single=%t: bound %v with 1 worker, %v with 3", single, a.Bound, b.Bound)
		}
		for i := range a.N {
			if a.N[i] != b.N[i] {
				t.Fatalf("single=%t: N[%d] %v with 1 worker, %v with 3", single, i, a.N[i], b.N[i])
			}
		}
		// The expected counts hold every token once.
		s := 0.0
		for _, v := range a.N {
			s += v
		}
		if math.Abs(s-float64(a.Tokens)) > 1e-9*s {
			t.Fatalf("single=%t: expected counts sum to %g, %d tokens", single, s, a.Tokens)
		}
	}
}

// TestEMAccMergeExact checks that the EM statistics of shards merged in any
// order and grouping, and passes with any number of workers, are those of
// one pass over the whole input bit for bit (the exact totals).
func TestEMAccMergeExact(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	const k, d, n = 5, 40, 300
	ctx := context.Background()
	for _, single := range []bool{false, true} {
		p := randomParams(r, k, d, single)
		src := emCorpus(r, n, d)
		whole := NewEMAcc(d, k)
		if err := whole.Pass(ctx, src.Docs, 3, p, nil); err != nil {
			t.Fatal(err)
		}
		want := emBytes(t, whole)
		cuts := []int{0, 41, 42, 190, n}
		shard := func(i, workers int) *EMAcc {
			a := NewEMAcc(d, k)
			if err := a.Pass(ctx, sub(src, cuts[i], cuts[i+1]).Docs, workers, p, nil); err != nil {
				t.Fatal(err)
			}
			return a
		}
		for _, order := range [][]int{{0, 1, 2, 3}, {3, 2, 1, 0}, {2, 0, 3, 1}} {
			total := shard(order[0], 1)
			for _, i := range order[1:] {
				if err := total.Merge(shard(i, 2)); err != nil {
					t.Fatal(err)
				}
			}
			total.Batches = whole.Batches // the shards' batches differ in number
			if got := emBytes(t, total); !bytes.Equal(got, want) {
				t.Fatalf("single=%t: shards merged in order %v differ from the whole pass (bound %v vs %v)", single, order, total.Bound, whole.Bound)
			}
		}
		// A tree of merges: (0+1) + (2+3).
		a, b := shard(0, 1), shard(2, 3)
		if err := a.Merge(shard(1, 1)); err != nil {
			t.Fatal(err)
		}
		if err := b.Merge(shard(3, 2)); err != nil {
			t.Fatal(err)
		}
		if err := b.Merge(a); err != nil {
			t.Fatal(err)
		}
		b.Batches = whole.Batches
		if !bytes.Equal(emBytes(t, b), want) {
			t.Fatalf("single=%t: a tree of merges differs from the whole pass", single)
		}
	}
}

// emBytes is a's encoding.
func emBytes(t *testing.T, a *EMAcc) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := a.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestEMAccEncode round-trips EM statistics bit for bit, merges decoded
// shards into the whole, and refuses damaged data.
func TestEMAccEncode(t *testing.T) {
	r := rand.New(rand.NewPCG(10, 11))
	const k, d = 3, 25
	p := randomParams(r, k, d, false)
	src := emCorpus(r, 60, d)
	whole, h1, h2 := NewEMAcc(d, k), NewEMAcc(d, k), NewEMAcc(d, k)
	for _, run := range []struct {
		a      *EMAcc
		lo, hi int
	}{{whole, 0, 60}, {h1, 0, 28}, {h2, 28, 60}} {
		if err := run.a.Pass(context.Background(), sub(src, run.lo, run.hi).Docs, 2, p, nil); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if err := h1.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	got, err := DecodeEMAcc(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, h1) {
		t.Fatal("decoded EM statistics differ from the encoded ones")
	}
	if err := got.Merge(h2); err != nil {
		t.Fatal(err)
	}
	if got.Docs != whole.Docs || got.Tokens != whole.Tokens || math.Abs(got.Bound-whole.Bound) > 1e-9*math.Abs(whole.Bound) {
		t.Errorf("merged shards: %d docs, %d tokens, bound %g; whole %d, %d, %g", got.Docs, got.Tokens, got.Bound, whole.Docs, whole.Tokens, whole.Bound)
	}
	bad := append([]byte(nil), data...)
	bad[len(bad)-9] ^= 1
	if _, err := DecodeEMAcc(bytes.NewReader(bad)); !errors.Is(err, statsfile.ErrChecksum) {
		t.Errorf("flipped bit: %v", err)
	}
	if _, err := DecodeEMAcc(bytes.NewReader(data[:len(data)-3])); !errors.Is(err, statsfile.ErrTruncated) {
		t.Errorf("truncated: %v", err)
	}
	if _, err := DecodeEMAcc(bytes.NewReader([]byte("SFSTATS\n"))); err == nil {
		t.Error("another file's magic accepted")
	}
}

// TestEMBound checks the held-out score against the bound of an EM pass
// over the same documents, for several numbers of workers.
func TestEMBound(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 13))
	const k, d = 4, 30
	p := randomParams(r, k, d, false)
	src := emCorpus(r, 300, d)
	acc := NewEMAcc(d, k)
	if err := acc.Pass(context.Background(), src.Docs, 2, p, nil); err != nil {
		t.Fatal(err)
	}
	for _, workers := range []int{1, 3} {
		bound, tokens, err := EMBound(context.Background(), src.Docs, workers, p)
		if err != nil {
			t.Fatal(err)
		}
		if bound != acc.Bound || tokens != acc.Tokens {
			t.Errorf("%d workers: bound %.17g over %d tokens, the EM pass's %.17g over %d", workers, bound, tokens, acc.Bound, acc.Tokens)
		}
	}
}

// BenchmarkEMPass times one EM pass (the E-step of every document and the
// sums of EMAcc) on one worker over 2,000 documents drawn from LDA
// (vocabulary 10,000, α₀ = 1, so a document uses few of the k topics, as
// real text does), with the true topics mixed with 1% of the uniform
// distribution as the parameters (as EM's start is smoothed), in
// documents per CPU-second.
//
//	go test ./models/lda -run '^$' -bench EMPass -count 5
func BenchmarkEMPass(b *testing.B) {
	for _, c := range []struct {
		k   int
		len float64
	}{{20, 40}, {20, 500}, {50, 40}, {50, 500}} {
		b.Run(fmt.Sprintf("k=%d/len=%g", c.k, c.len), func(b *testing.B) {
			const d = 10000
			corpus, err := synth.NewLDA(synth.LDAConfig{Docs: 2000, Vocab: d, K: c.k, Alpha0: 1, DocLen: c.len, Seed: 3})
			if err != nil {
				b.Fatal(err)
			}
			all, err := stream.Collect(context.Background(), corpus)
			if err != nil {
				b.Fatal(err)
			}
			topics, alpha := corpus.Truth.Topics, corpus.Truth.Alpha
			// One batch, as a source of long batches gives it.
			src := &stream.MemoryDocs{All: all, Terms: d, BatchRows: all.Len()}
			p := &TopicParams{K: c.k, D: d, Alpha: alpha, Beta: make([]float64, c.k*d)}
			for j, row := range topics {
				for w, v := range row {
					p.Beta[w*c.k+j] = 0.99*v + 0.01/d
				}
			}
			b.ReportAllocs()
			cpu := sysinfo.CPUTime()
			var iters int64
			for b.Loop() {
				acc := NewEMAcc(d, c.k)
				if err := acc.Pass(context.Background(), src.Docs, 1, p, nil); err != nil {
					b.Fatal(err)
				}
				iters += acc.Iters
			}
			b.ReportMetric(float64(all.Len()*b.N)/(sysinfo.CPUTime()-cpu).Seconds(), "docs/cpu-s")
			b.ReportMetric(float64(iters)/float64(all.Len()*b.N), "iters/doc")
		})
	}
}

// TestEMAccPieces checks that an EM pass over one batch larger than a piece
// (cut by implicit.SplitBatches) gives the statistics of a pass over small
// batches (never cut), bit for bit.
func TestEMAccPieces(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 28))
	const d, k = 400, 6
	all := stream.NewDocs(0)
	for all.NNZ() <= EMPieceEntries {
		for _, w := range r.Perm(d)[:1+r.IntN(160)] {
			all.Add(int32(w), int32(1+r.IntN(3)))
		}
		all.EndDoc()
	}
	p := randomParams(r, k, d, false)
	whole := &stream.MemoryDocs{All: all.Clone(), Terms: d, BatchRows: all.Len()}
	small := &stream.MemoryDocs{All: all.Clone(), Terms: d, BatchRows: 64}
	a, b := NewEMAcc(d, k), NewEMAcc(d, k)
	if err := a.Pass(context.Background(), whole.Docs, 3, p, nil); err != nil {
		t.Fatal(err)
	}
	if err := b.Pass(context.Background(), small.Docs, 2, p, nil); err != nil {
		t.Fatal(err)
	}
	if a.Bound != b.Bound || a.Docs != b.Docs || !reflect.DeepEqual(a.N, b.N) || !reflect.DeepEqual(a.Suff, b.Suff) {
		t.Fatalf("one batch cut into pieces: bound %v, %d documents; small batches: %v, %d", a.Bound, a.Docs, b.Bound, b.Docs)
	}
}
