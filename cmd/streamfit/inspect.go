package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"time"

	"github.com/streamfit/streamfit/stream"
)

func init() {
	register("inspect", "describe a data file: format, schema, rows, vocabulary, nnz, lengths", runInspect)
}

// inspection is what inspect reports (its --json output).
type inspection struct {
	stream.Info
	Kind    string       `json:"kind"` // "documents" or "dense"
	Tokens  int64        `json:"tokens,omitempty"`
	Empty   int64        `json:"empty_docs,omitempty"`
	Short   int64        `json:"short_docs,omitempty"` // fewer than 3 tokens: skipped by fits
	MaxTerm int64        `json:"max_term_id,omitempty"`
	Lengths *quants      `json:"doc_length,omitempty"`
	Groups  int64        `json:"groups,omitempty"`
	Columns []colSummary `json:"columns,omitempty"`
	Seconds float64      `json:"seconds"`
}

type quants struct {
	Min, P10, P50, P90, P99, Max int64
	Mean                         float64
}

type colSummary struct {
	Mean, Std, Min, Max float64
}

func runInspect(ctx context.Context, args []string) error {
	fs := newFlags("inspect", "FILE", "Reads FILE once and reports its format, schema, number of rows, vocabulary size, nnz, tokens and document-length quantiles (or per-column summaries of dense samples).")
	o := addInputFlags(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	dense := fs.Bool("dense", false, "read as dense samples")
	prog := addProgressFlag(fs)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want one FILE, got %d arguments", len(pos))
	}
	path := pos[0]
	start := time.Now()
	var in *inspection
	if !*dense {
		p, done := startProgress(*prog, "inspect", fileSize(path))
		o.Progress = p
		src, oerr := stream.Open(path, *o)
		if oerr == nil {
			in, err = inspectDocs(ctx, src)
			done()
			stream.Close(src)
			if err != nil {
				return err
			}
		} else if done(); errors.Is(oerr, stream.ErrSchema) {
			*dense = true // a table without document columns may hold samples
		} else {
			return oerr
		}
	}
	if *dense {
		src, err := stream.OpenDense(path, *o)
		if err != nil {
			return err
		}
		in, err = inspectDense(ctx, src)
		stream.Close(src)
		if err != nil {
			return err
		}
	}
	in.Seconds = time.Since(start).Seconds()
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(in)
	}
	printInspection(in)
	return nil
}

func inspectDocs(ctx context.Context, src stream.DocSource) (*inspection, error) {
	in := &inspection{Info: src.Info(), Kind: "documents", MaxTerm: -1}
	// Exact quantiles from a histogram of lengths: memory grows with the longest
	// document, never with the number of documents.
	var hist []int64
	in.Rows, in.NNZ = 0, 0
	for b, err := range src.Docs(ctx) {
		if err != nil {
			return nil, err
		}
		for i := range b.Len() {
			n := b.Length(i)
			if int64(len(hist)) <= n {
				hist = slices.Grow(hist, int(n)+1-len(hist))[:n+1]
			}
			hist[n]++
			in.Tokens += n
			switch {
			case n == 0:
				in.Empty++
				fallthrough
			case n < 3:
				in.Short++
			}
		}
		for _, t := range b.Terms {
			in.MaxTerm = max(in.MaxTerm, int64(t))
		}
		in.Rows += int64(b.Len())
		in.NNZ += int64(b.NNZ())
		b.Release()
	}
	if in.Terms == 0 {
		in.Terms = int(in.MaxTerm + 1)
	}
	if in.Rows > 0 {
		q := &quants{Mean: float64(in.Tokens) / float64(in.Rows)}
		at := func(f float64) int64 {
			target := int64(math.Ceil(f * float64(in.Rows)))
			var cum int64
			for n, c := range hist {
				if cum += c; cum >= max(target, 1) {
					return int64(n)
				}
			}
			return int64(len(hist) - 1)
		}
		q.Min, q.P10, q.P50, q.P90, q.P99, q.Max = at(0), at(0.1), at(0.5), at(0.9), at(0.99), int64(len(hist)-1)
		in.Lengths = q
	}
	return in, nil
}

func inspectDense(ctx context.Context, src stream.DenseSource) (*inspection, error) {
	in := &inspection{Info: src.Info(), Kind: "dense"}
	var sum, sum2, lo, hi []float64
	groups := map[int64]struct{}{}
	in.Rows = 0
	for b, err := range src.Rows(ctx) {
		if err != nil {
			return nil, err
		}
		if sum == nil {
			in.Cols = b.Cols
			sum, sum2 = make([]float64, b.Cols), make([]float64, b.Cols)
			lo, hi = make([]float64, b.Cols), make([]float64, b.Cols)
			for j := range lo {
				lo[j], hi[j] = math.Inf(1), math.Inf(-1)
			}
		}
		for i := range b.Rows {
			for j, x := range b.Row(i) {
				sum[j] += x
				sum2[j] += x * x
				lo[j], hi[j] = min(lo[j], x), max(hi[j], x)
			}
		}
		// Distinct ids are counted exactly up to a million, then reported as a floor.
		for _, g := range b.Group {
			if len(groups) < 1e6 {
				groups[g] = struct{}{}
			}
		}
		in.Rows += int64(b.Rows)
		b.Release()
	}
	in.Groups = int64(len(groups))
	for j := range sum {
		n := float64(in.Rows)
		m := sum[j] / n
		in.Columns = append(in.Columns, colSummary{Mean: m, Std: math.Sqrt(max(sum2[j]/n-m*m, 0)), Min: lo[j], Max: hi[j]})
	}
	return in, nil
}

func printInspection(in *inspection) {
	fmt.Printf("file:      %s\nformat:    %s", in.Path, in.Format)
	if in.Layout != "" {
		fmt.Printf(" (%s)", in.Layout)
	}
	fmt.Println()
	if in.Schema != "" {
		fmt.Printf("schema:    %s\n", in.Schema)
	}
	if in.Bytes > 0 {
		fmt.Printf("size:      %.1f MB\n", float64(in.Bytes)/1e6)
	}
	fmt.Printf("rows:      %d\n", in.Rows)
	if in.Kind == "dense" {
		fmt.Printf("columns:   %d\n", in.Cols)
		if in.Groups > 0 {
			fmt.Printf("groups:    %d\n", in.Groups)
		}
		for j, c := range in.Columns {
			if j == 20 {
				fmt.Printf("  ... %d more columns (--json shows all)\n", len(in.Columns)-20)
				break
			}
			fmt.Printf("  col %-4d mean %-10.4g std %-10.4g min %-10.4g max %.4g\n", j, c.Mean, c.Std, c.Min, c.Max)
		}
		fmt.Printf("time:      %.2fs\n", in.Seconds)
		return
	}
	fmt.Printf("vocabulary: %d", in.Terms)
	if in.Vocab == nil {
		fmt.Print(" (no word list)")
	}
	fmt.Printf("\nnnz:       %d\ntokens:    %d\n", in.NNZ, in.Tokens)
	if in.Short > 0 {
		fmt.Printf("short:     %d documents with fewer than 3 tokens (%d empty)\n", in.Short, in.Empty)
	}
	if q := in.Lengths; q != nil {
		fmt.Printf("doc length: min %d, p10 %d, median %d, p90 %d, p99 %d, max %d, mean %.1f\n", q.Min, q.P10, q.P50, q.P90, q.P99, q.Max, q.Mean)
	}
	fmt.Printf("time:      %.2fs\n", in.Seconds)
}
