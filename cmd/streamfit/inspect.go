package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/streamfit/streamfit/stream"
	"github.com/streamfit/streamfit/stream/columnar"
	"github.com/streamfit/streamfit/stream/text"
)

// inspection is what inspect reports (its --json output).
type inspection struct {
	stream.Info
	Kind    string       `json:"kind"` // "documents", "text" (raw text without a vocabulary) or "dense"
	Tokens  int64        `json:"tokens,omitempty"`
	Empty   int64        `json:"empty_docs,omitempty"`
	Short   int64        `json:"short_docs,omitempty"` // fewer than 3 tokens: skipped by fits
	MaxTerm int64        `json:"max_term_id,omitempty"`
	Lengths *quants      `json:"doc_length,omitempty"`
	Groups  int64        `json:"groups,omitempty"`
	Columns []colSummary `json:"columns,omitempty"`
	// PieceUnit and Pieces list the row groups of a Parquet file or the
	// record batches of an Arrow IPC file, for planning shards (stats
	// --row-groups).
	PieceUnit string           `json:"piece_unit,omitempty"`
	Pieces    []columnar.Piece `json:"pieces,omitempty"`
	Seconds   float64          `json:"seconds"`
}

type quants struct {
	Min, P10, P50, P90, P99, Max int64
	Mean                         float64
	// Approx is set when a quantile fell among lengths of 2^16 tokens or
	// more, which are binned with 1/16-octave resolution: such a quantile is
	// the lower edge of its bin (at most 4.4% below the true value). Min and
	// Max are always exact.
	Approx bool `json:",omitempty"`
}

// exactLengths is the document length below which the histogram counts each
// length exactly (512 KB of counters).
const exactLengths = 1 << 16

// lengthHist counts document lengths in bounded memory, whatever the lengths:
// one counter per length below exactLengths, then 16 bins per octave.
type lengthHist struct {
	exact    []int64
	log      map[int]int64 // bin index → count, for lengths ≥ exactLengths
	n        int64
	min, max int64
}

// logBin is the bin of a length ≥ exactLengths: 16 bins per power of two.
func logBin(x int64) int { return int(math.Floor(16 * math.Log2(float64(x)))) }

// binLow is the smallest length in bin b.
func binLow(b int) int64 { return int64(math.Ceil(math.Exp2(float64(b) / 16))) }

func (h *lengthHist) add(x int64) {
	if h.n == 0 || x < h.min {
		h.min = x
	}
	h.max = max(h.max, x)
	h.n++
	if x < exactLengths {
		if int64(len(h.exact)) <= x {
			h.exact = slices.Grow(h.exact, int(x)+1-len(h.exact))[:x+1]
		}
		h.exact[x]++
		return
	}
	if h.log == nil {
		h.log = map[int]int64{}
	}
	h.log[logBin(x)]++
}

// merge adds o's counts to h.
func (h *lengthHist) merge(o *lengthHist) {
	if o.n == 0 {
		return
	}
	if h.n == 0 || o.min < h.min {
		h.min = o.min
	}
	h.max, h.n = max(h.max, o.max), h.n+o.n
	if len(h.exact) < len(o.exact) {
		h.exact = append(h.exact, make([]int64, len(o.exact)-len(h.exact))...)
	}
	for i, c := range o.exact {
		h.exact[i] += c
	}
	for b, c := range o.log {
		if h.log == nil {
			h.log = map[int]int64{}
		}
		h.log[b] += c
	}
}

// quantiles summarises the histogram; tokens is the sum of the lengths.
func (h *lengthHist) quantiles(tokens int64) *quants {
	if h.n == 0 {
		return nil
	}
	q := &quants{Mean: float64(tokens) / float64(h.n), Min: h.min, Max: h.max}
	bins := slices.Sorted(maps.Keys(h.log))
	at := func(f float64) int64 {
		target := max(int64(math.Ceil(f*float64(h.n))), 1)
		var cum int64
		for x, c := range h.exact {
			if cum += c; cum >= target {
				return int64(x)
			}
		}
		for _, b := range bins {
			if cum += h.log[b]; cum >= target {
				q.Approx = true
				return max(binLow(b), exactLengths)
			}
		}
		return h.max
	}
	q.P10, q.P50, q.P90, q.P99 = at(0.1), at(0.5), at(0.9), at(0.99)
	return q
}

type colSummary struct {
	Mean, Std, Min, Max float64
}

// inspectAbout is the help of `streamfit inspect`.
const inspectAbout = `Reads FILE once and reports its format, schema, number of rows, vocabulary size, nnz, tokens and document-length quantiles (or per-column summaries of dense samples).
For a Parquet file (Arrow IPC file) it lists the row groups (record batches) with their rows, from the metadata: the units of ` + "`streamfit stats --row-groups`" + `.
With --row-groups it lists only those, from the metadata, without reading the data: planning shards of a big file is instant.`

func runInspect(ctx context.Context, e *env, args []string) error {
	fs := newFlags("inspect", "FILE", inspectAbout)
	o := e.addInputFlags(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	dense := fs.Bool("dense", false, "read as dense samples")
	piecesOnly := fs.Bool("row-groups", false, "only list the row groups (record batches) and their rows, from the metadata, without reading the data")
	prog := addProgressFlag(fs)
	pos, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want one FILE, got %d arguments", len(pos))
	}
	path := pos[0]
	start := time.Now()
	var in *inspection
	if *piecesOnly {
		if in, err = inspectPieces(path, *o); err != nil {
			return err
		}
		*dense = false
	}
	var docsErr error // the documents' schema error, when the file is then read as dense samples
	if !*dense && in == nil {
		p, done := e.startProgress(*prog, "inspect", fileSize(path))
		o.Progress = p
		src, oerr := stream.Open(path, *o)
		switch {
		case oerr == nil:
			in, err = inspectDocs(ctx, src)
			stream.Close(src)
		case errors.Is(oerr, stream.ErrNeedVocab):
			in, err = inspectText(ctx, path, *o)
		case errors.Is(oerr, stream.ErrSchema):
			*dense = true // a table without document columns may hold samples
			docsErr = oerr
		default:
			err = oerr
		}
		done()
		if err != nil {
			return err
		}
	}
	if *dense {
		src, err := stream.OpenDense(path, *o)
		if err != nil {
			if docsErr != nil && errors.Is(err, stream.ErrFormat) {
				return docsErr // a format of documents only: say what is wrong with them
			}
			return err
		}
		in, err = inspectDense(ctx, src)
		stream.Close(src)
		if err != nil {
			return err
		}
	}
	if in.Pieces == nil {
		if pieces, err := columnar.Pieces(path, *o); err == nil {
			in.PieceUnit, in.Pieces = columnar.PieceUnit(in.Format, 1), pieces
		} else if !errors.Is(err, columnar.ErrRange) {
			return err
		}
	}
	in.Seconds = time.Since(start).Seconds()
	switch {
	case *asJSON:
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(in)
	case *piecesOnly:
		e.printHead(in)
		e.printPieces(in)
	default:
		e.printInspection(in)
	}
	return nil
}

// inspectPieces describes path from its metadata alone: what opening it
// tells, and its row groups (record batches).
func inspectPieces(path string, o stream.Options) (*inspection, error) {
	pieces, err := columnar.Pieces(path, o)
	if errors.Is(err, columnar.ErrRange) {
		return nil, usageError{"--row-groups: " + err.Error()}
	}
	if err != nil {
		return nil, err
	}
	in := &inspection{Kind: "documents", Pieces: pieces}
	if src, err := stream.Open(path, o); err == nil {
		in.Info = src.Info()
		stream.Close(src)
	} else if dsrc, derr := stream.OpenDense(path, o); derr == nil {
		in.Info, in.Kind = dsrc.Info(), "dense"
		stream.Close(dsrc)
	} else if errors.Is(err, stream.ErrNeedVocab) {
		in.Kind = "text"
	}
	if in.Path == "" {
		f, err := stream.Detect(path, o.Format)
		if err != nil {
			return nil, err
		}
		in.Info = stream.Info{Path: path, Format: f.Name, NNZ: -1, Bytes: fileSize(path)}
	}
	in.PieceUnit = columnar.PieceUnit(in.Format, 1)
	if in.Layout != columnar.LayoutLong { // else pieces count entries
		in.Rows = 0
		for _, p := range pieces {
			in.Rows += p.Rows
		}
	}
	return in, nil
}

func inspectDocs(ctx context.Context, src stream.DocSource) (*inspection, error) {
	in := &inspection{Info: src.Info(), Kind: "documents", MaxTerm: -1}
	var hist lengthHist
	in.Rows, in.NNZ = 0, 0
	for b, err := range src.Docs(ctx) {
		if err != nil {
			return nil, err
		}
		for i := range b.Len() {
			n := b.Length(i)
			hist.add(n)
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
	in.Lengths = hist.quantiles(in.Tokens)
	return in, nil
}

// inspectText tokenizes raw text without a vocabulary: documents, tokens and
// length quantiles, but no vocabulary size or nnz, which need one.
func inspectText(ctx context.Context, path string, o stream.Options) (*inspection, error) {
	src, err := stream.OpenText(path, o)
	if err != nil {
		return nil, err
	}
	defer stream.Close(src)
	tok, err := text.NewTokenizer(o)
	if err != nil {
		return nil, usageError{err.Error()}
	}
	o = o.WithDefaults()
	in := &inspection{Info: src.Info(), Kind: "text", MaxTerm: -1}
	in.Rows, in.NNZ = 0, -1
	hists := make([]lengthHist, o.Workers)
	tokens := make([]int64, o.Workers)
	bufs := make([][]string, o.Workers)
	err = stream.Each(ctx, textBatches(src), o.Workers, func(w int, b textBatch) error {
		for _, doc := range b.Text {
			bufs[w] = tok.Tokens(bufs[w][:0], doc)
			n := int64(len(bufs[w]))
			hists[w].add(n)
			tokens[w] += n
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var hist lengthHist
	for w := range hists {
		hist.merge(&hists[w])
		in.Tokens += tokens[w]
	}
	in.Rows = hist.n
	in.Lengths = hist.quantiles(in.Tokens)
	return in, nil
}

// textBatch adapts a batch of raw text to stream.Each.
type textBatch struct{ *stream.Texts }

func (textBatch) Release() {}

func textBatches(src stream.TextSource) func(context.Context) iter.Seq2[textBatch, error] {
	return func(ctx context.Context) iter.Seq2[textBatch, error] {
		return func(yield func(textBatch, error) bool) {
			for b, err := range src.Texts(ctx) {
				if !yield(textBatch{b}, err) {
					return
				}
			}
		}
	}
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

// printHead prints what inspect knows of a file before reading it.
func (e *env) printHead(in *inspection) {
	fmt.Fprintf(e.stdout, "file:      %s\nformat:    %s", in.Path, in.Format)
	if in.Layout != "" {
		fmt.Fprintf(e.stdout, " (%s)", in.Layout)
	}
	fmt.Fprintln(e.stdout)
	if in.Schema != "" {
		fmt.Fprintf(e.stdout, "schema:    %s\n", in.Schema)
	}
	if in.Bytes > 0 {
		fmt.Fprintf(e.stdout, "size:      %.1f MB\n", float64(in.Bytes)/1e6)
	}
	if in.Checksum != "" {
		fmt.Fprintf(e.stdout, "checksum:  %s\n", in.Checksum)
	}
	fmt.Fprintf(e.stdout, "rows:      %d\n", in.Rows)
}

func (e *env) printInspection(in *inspection) {
	e.printHead(in)
	if in.Kind == "dense" {
		fmt.Fprintf(e.stdout, "columns:   %d\n", in.Cols)
		if in.Groups > 0 {
			fmt.Fprintf(e.stdout, "groups:    %d\n", in.Groups)
		}
		for j, c := range in.Columns {
			if j == 20 {
				fmt.Fprintf(e.stdout, "  ... %d more columns (--json shows all)\n", len(in.Columns)-20)
				break
			}
			fmt.Fprintf(e.stdout, "  col %-4d mean %-10.4g std %-10.4g min %-10.4g max %.4g\n", j, c.Mean, c.Std, c.Min, c.Max)
		}
		e.printPieces(in)
		fmt.Fprintf(e.stdout, "time:      %.2fs\n", in.Seconds)
		return
	}
	if in.Kind == "text" {
		fmt.Fprintf(e.stdout, "vocabulary: unknown: raw text, tokenized with the default settings (or the given flags)\n")
		fmt.Fprintf(e.stdout, "           for the vocabulary size and nnz: streamfit vocab build --out VOCAB %s; then inspect with --vocab VOCAB\n", in.Path)
		fmt.Fprintf(e.stdout, "tokens:    %d\n", in.Tokens)
	} else {
		fmt.Fprintf(e.stdout, "vocabulary: %d", in.Terms)
		if in.Vocab == nil {
			fmt.Fprint(e.stdout, " (no word list)")
		}
		fmt.Fprintf(e.stdout, "\nnnz:       %d\ntokens:    %d\n", in.NNZ, in.Tokens)
	}
	if in.Short > 0 {
		fmt.Fprintf(e.stdout, "short:     %d documents with fewer than 3 tokens (%d empty)\n", in.Short, in.Empty)
	}
	if q := in.Lengths; q != nil {
		fmt.Fprintf(e.stdout, "doc length: min %d, p10 %d, median %d, p90 %d, p99 %d, max %d, mean %.1f", q.Min, q.P10, q.P50, q.P90, q.P99, q.Max, q.Mean)
		if q.Approx {
			fmt.Fprint(e.stdout, " (quantiles above 65535 tokens within 4.4%)")
		}
		fmt.Fprintln(e.stdout)
	}
	e.printPieces(in)
	fmt.Fprintf(e.stdout, "time:      %.2fs\n", in.Seconds)
}

// shownPieces is how many pieces inspect prints (--json lists all).
const shownPieces = 20

// printPieces lists the row groups (record batches) of the file, with the
// rows each holds: the ranges `stats --row-groups` takes.
func (e *env) printPieces(in *inspection) {
	if len(in.Pieces) == 0 {
		return
	}
	what, hint := "documents", " (stats --row-groups FIRST:END reads a range of them)"
	switch {
	case in.Kind == "dense":
		what, hint = "rows", ""
	case in.Layout == columnar.LayoutLong:
		what, hint = "table rows", " (long layout: a document may span them, so stats --row-groups refuses this file)"
	}
	fmt.Fprintf(e.stdout, "%s: %d%s\n", columnar.PieceUnit(in.Format, len(in.Pieces)), len(in.Pieces), hint)
	fmt.Fprintf(e.stdout, "  %6s  %-27s %10s %10s\n", "#", what, "count", "MB")
	for i, p := range in.Pieces {
		if i == shownPieces {
			fmt.Fprintf(e.stdout, "  ... %d more (--json lists all)\n", len(in.Pieces)-shownPieces)
			break
		}
		fmt.Fprintf(e.stdout, "  %6d  %-27s %10d %10.2f\n", p.Index, fmt.Sprintf("%d:%d", p.FirstRow, p.FirstRow+p.Rows), p.Rows, float64(p.Bytes)/1e6)
	}
}
