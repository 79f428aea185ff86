package main

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/streamfit/streamfit/stream"
)

// cli runs streamfit in-process and returns its exit status, its error
// line and everything else it wrote on stderr (the plan, warnings). The
// error line is the last one: run writes it after the command returns.
func cli(t *testing.T, args ...string) (code int, msg, printed string) {
	t.Helper()
	code, _, errs := streamfit(t, args...)
	if code == 0 {
		return code, "", errs
	}
	body := strings.TrimSuffix(errs, "\n")
	i := strings.LastIndexByte(body, '\n')
	return code, body[i+1:] + "\n", body[:i+1]
}

// jsonRecord builds a record of one row per JSON value of each column.
func jsonRecord(t *testing.T, fields []arrow.Field, cols ...string) arrow.RecordBatch {
	t.Helper()
	arrs := make([]arrow.Array, len(cols))
	for i, c := range cols {
		a, _, err := array.FromJSON(memory.DefaultAllocator, fields[i].Type, strings.NewReader(c))
		if err != nil {
			t.Fatalf("column %d: %v", i, err)
		}
		arrs[i] = a
	}
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), arrs, int64(arrs[0].Len()))
}

// writeArrowFile writes rec as an Arrow IPC file, as another tool would.
func writeArrowFile(t *testing.T, path string, rec arrow.RecordBatch) {
	t.Helper()
	var buf bytes.Buffer
	w, err := ipc.NewFileWriter(&buf, ipc.WithSchema(rec.Schema()))
	if err == nil {
		err = w.Write(rec)
	}
	if err == nil {
		err = w.Close()
	}
	if err == nil {
		err = os.WriteFile(path, buf.Bytes(), 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// otherWriterParquet writes n documents of lists with dictionary pages,
// snappy, small pages and no streamfit metadata (no row group checksums),
// as pyarrow would.
func otherWriterParquet(t *testing.T, path string, n int) {
	t.Helper()
	lt := arrow.ListOf(arrow.PrimitiveTypes.Int32)
	sc := arrow.NewSchema([]arrow.Field{{Name: "terms", Type: lt, Nullable: true}, {Name: "counts", Type: lt, Nullable: true}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for i := range n {
		tl, cl := b.Field(0).(*array.ListBuilder), b.Field(1).(*array.ListBuilder)
		tl.Append(true)
		cl.Append(true)
		for j := range 3 + i%5 {
			tl.ValueBuilder().(*array.Int32Builder).Append(int32((i*7 + j*13) % 40))
			cl.ValueBuilder().(*array.Int32Builder).Append(int32(1 + j))
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Snappy), parquet.WithDataPageSize(256))
	w, err := pqarrow.NewFileWriter(sc, f, props, pqarrow.DefaultWriterProps())
	if err == nil {
		err = w.Write(rec)
	}
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
}

// panickingFlip writes to bad a copy of the file good with the first bit
// flip (in its first 400 bytes, its first pages) that makes a decoder
// panic: the damage a flipped bit in a page header did to another
// writer's file, which crashed the CLI.
func panickingFlip(t *testing.T, good, bad string) {
	t.Helper()
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	for i := 4; i < min(len(data), 400); i++ {
		for bit := range 8 {
			c := bytes.Clone(data)
			c[i] ^= 1 << bit
			os.WriteFile(bad, c, 0o644)
			src, err := stream.Open(bad, stream.Options{Terms: 40})
			if err == nil {
				_, err = stream.Collect(context.Background(), src)
			}
			var pe *stream.PanicError
			if errors.As(err, &pe) {
				return
			}
		}
	}
	t.Fatal("no flipped bit makes a decoder panic: the case tests nothing")
}

// npyArray is a one-dimensional .npy array as numpy.save writes it.
func npyArray(descr string, vals []int64) []byte {
	header := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': (%d,), }", descr, len(vals))
	if descr[1] == 'S' {
		header = fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': (), }", descr)
	}
	header += strings.Repeat(" ", 63-(10+len(header))%64) + "\n"
	var b bytes.Buffer
	b.WriteString("\x93NUMPY\x01\x00")
	binary.Write(&b, binary.LittleEndian, uint16(len(header)))
	b.WriteString(header)
	for _, v := range vals {
		binary.Write(&b, binary.LittleEndian, v)
	}
	return b.Bytes()
}

// writeNPZ saves a CSR matrix of counts as scipy.sparse.save_npz does
// (members stored, not deflated).
func writeNPZ(t *testing.T, path string, rows, cols int, indptr, ind, data []int64) {
	t.Helper()
	var buf bytes.Buffer
	z := zip.NewWriter(&buf)
	for _, m := range []struct {
		name string
		body []byte
	}{
		{"indices.npy", npyArray("<i8", ind)},
		{"indptr.npy", npyArray("<i8", indptr)},
		{"format.npy", append(npyArray("|S3", nil), "csr"...)},
		{"shape.npy", npyArray("<i8", []int64{int64(rows), int64(cols)})},
		{"data.npy", npyArray("<i8", data)},
	} {
		w, err := z.CreateHeader(&zip.FileHeader{Name: m.name, Method: zip.Store})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(m.body)
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// sparkVectors is Spark ML's VectorUDT.
var sparkVectors = []arrow.Field{{Name: "features", Type: arrow.StructOf(
	arrow.Field{Name: "type", Type: arrow.PrimitiveTypes.Int8},
	arrow.Field{Name: "size", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	arrow.Field{Name: "indices", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32), Nullable: true},
	arrow.Field{Name: "values", Type: arrow.ListOf(arrow.PrimitiveTypes.Float64), Nullable: true},
)}}

// sparkRows is n sparse vectors of size 30 as JSON, row bad's first count
// being 0.5 when bad ≥ 0; dense vectors of length 30 when dense.
func sparkRows(n, bad int, dense bool) string {
	var rows []string
	for i := range n {
		switch {
		case dense:
			v := make([]string, 30)
			for j := range v {
				v[j] = fmt.Sprint((i + j) % 3)
			}
			rows = append(rows, fmt.Sprintf(`{"type":1,"size":null,"indices":null,"values":[%s]}`, strings.Join(v, ",")))
		default:
			c := "1"
			if i == bad {
				c = "0.5"
			}
			rows = append(rows, fmt.Sprintf(`{"type":0,"size":30,"indices":[%d,%d,%d],"values":[%s,2,3]}`, i%10, 10+i%10, 20+i%10, c))
		}
	}
	return "[" + strings.Join(rows, ",") + "]"
}

// Every damaged or unusual input of the second bad-input probe, and every
// misuse it tried, as a row: the exit status and what the message must
// say. Nothing is written and no temporary file is left by a failure.
func TestDamagedInputs(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	write := func(name, data string) string {
		if err := os.WriteFile(p(name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return p(name)
	}
	c := smallCorpus(t, dir, "c.parquet")
	mustRun(t, "fit", "lda", "--input", c, "--k", "5", "--out", p("m.json"), "--progress", "off")
	vocab := write("vocab.txt", "")
	words := make([]string, 300)
	for i := range words {
		words[i] = fmt.Sprintf("w%d", i)
	}
	os.WriteFile(vocab, []byte(strings.Join(words, "\n")+"\n"), 0o644)

	// Other writers' Parquet, damaged in a page header.
	otherWriterParquet(t, p("other.parquet"), 400)
	panickingFlip(t, p("other.parquet"), p("flipped.parquet"))
	// A model of 40 words, for infer to read it with.
	mustRun(t, "gen", "lda", "--docs", "600", "--vocab", "40", "--k", "3", "--doc-len", "30", "--out", p("c40.parquet"), "--progress", "off")
	mustRun(t, "fit", "lda", "--input", p("c40.parquet"), "--k", "3", "--out", p("other.json"), "--progress", "off")
	// A long table (pqarrow's reader) likewise.
	long := jsonRecord(t, []arrow.Field{{Name: "doc", Type: arrow.PrimitiveTypes.Int64}, {Name: "term", Type: arrow.PrimitiveTypes.Int32}, {Name: "count", Type: arrow.PrimitiveTypes.Int32}},
		`[0,0,1,1,2,2,3,3,4,4,5,5]`, `[1,2,3,4,5,6,7,8,9,10,11,12]`, `[1,2,1,2,1,2,1,2,1,2,1,2]`)
	writeRecordParquet(t, p("long.parquet"), long)
	panickingFlip(t, p("long.parquet"), p("long-flipped.parquet"))
	// A damaged footer of another writer's file: the first flip of its
	// last 300 bytes that the footer's reader refuses.
	b := readFile(t, p("other.parquet"))
	for i := len(b) - 9; ; i-- {
		if i < len(b)-300 {
			t.Fatal("no flip in the footer is refused: the case tests nothing")
		}
		c := bytes.Clone(b)
		c[i] ^= 0x40
		os.WriteFile(p("footer.parquet"), c, 0o644)
		if _, err := stream.Open(p("footer.parquet"), stream.Options{}); err != nil {
			break
		}
	}

	// .npz: a count changed in a stored member (only its CRC shows it), a
	// cut, a bad value far into a member.
	n := 6000
	indptr, ind, data := []int64{0}, []int64{}, []int64{}
	for i := range n {
		ind, data, indptr = append(ind, int64(i%10)), append(data, 3), append(indptr, int64(i+1))
	}
	writeNPZ(t, p("good.npz"), n, 10, indptr, ind, data)
	b = readFile(t, p("good.npz"))
	at := bytes.LastIndex(b, []byte{3, 0, 0, 0, 0, 0, 0, 0})
	b[at] = 2
	os.WriteFile(p("crc.npz"), b, 0o644)
	os.WriteFile(p("cut.npz"), readFile(t, p("good.npz"))[:300], 0o644)
	data[5000] = -4
	writeNPZ(t, p("value.npz"), n, 10, indptr, ind, data)

	// A directory of text with binary files.
	os.Mkdir(p("texts"), 0o755)
	for i := range 30 {
		os.WriteFile(filepath.Join(p("texts"), fmt.Sprintf("d%02d.txt", i)), []byte(strings.Repeat(fmt.Sprintf("w%d w%d w%d ", i%7, i%5, i%3), 20)), 0o644)
	}
	for i := range 4 {
		os.WriteFile(filepath.Join(p("texts"), fmt.Sprintf("img%d.png", i)), []byte("\x89PNG\x00\x00 w1 w2 w3 w4"), 0o644)
	}
	// A dataset of hidden parts only.
	os.Mkdir(p("hidden"), 0o755)
	os.WriteFile(filepath.Join(p("hidden"), ".part-0.parquet"), readFile(t, c), 0o644)
	os.WriteFile(filepath.Join(p("hidden"), "_SUCCESS"), nil, 0o644)

	// Arrow: no vocabulary anywhere; a stream with a damaged start.
	writeArrowFile(t, p("novocab.arrow"), jsonRecord(t, []arrow.Field{{Name: "terms", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32)}, {Name: "counts", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32)}},
		`[[1,2],[3]]`, `[[1,1],[2]]`))
	mustRun(t, "convert", c, p("c.arrows"))
	b = readFile(t, p("c.arrows"))
	b[0] ^= 0x80
	os.WriteFile(p("badstart.arrows"), b, 0o644)
	// Nulls in a list of counts.
	lt := arrow.ListOf(arrow.PrimitiveTypes.Int32)
	writeRecordParquet(t, p("nulls.parquet"), jsonRecord(t, []arrow.Field{{Name: "terms", Type: lt}, {Name: "counts", Type: lt}},
		`[[1,2],[3,4,5]]`, `[[1,1],[2,null,2]]`))

	// Spark vectors: a fractional count at row 8, dense vectors only, a
	// size smaller than the indices.
	writeRecordParquet(t, p("spark-frac.parquet"), jsonRecord(t, sparkVectors, sparkRows(40, 8, false)))
	writeRecordParquet(t, p("spark-dense.parquet"), jsonRecord(t, sparkVectors, sparkRows(200, -1, true)))
	writeRecordParquet(t, p("spark-small.parquet"), jsonRecord(t, sparkVectors, `[{"type":0,"size":5,"indices":[1,9],"values":[1,1]}]`))

	// Matrix Market: counts as reals in exponent form, a lower-case banner.
	var mm strings.Builder
	mm.WriteString("%%matrixmarket matrix coordinate real general\n400 30 1200\n")
	for i := range 400 {
		for j := range 3 {
			fmt.Fprintf(&mm, "%d %d %de+00\n", i+1, 1+(i+j*7)%30, 1+j)
		}
	}
	market := write("corpus.mm", mm.String())
	// A gensim dictionary without its first line, for that corpus.
	var gd strings.Builder
	for i := range 30 {
		fmt.Fprintf(&gd, "%d\tw%d\t5\n", i, i)
	}
	gensim := write("dict.txt", gd.String())

	// Text: a byte order mark, CR-only lines, Latin-1 bytes.
	bom := write("bom.txt", "\ufeffw1 w2 w3\nw2 w3 w1\nw3 w1 w2\n")
	cr := write("cr.txt", "one two\rthree four\rfive six\r")
	latin := write("latin.txt", "caf\xe9 noir\ncaf\xe9 latin\n")

	// Models: α negative and zero; evaluations: another model's, a figure
	// that is not a number.
	var model map[string]any
	json.Unmarshal(readFile(t, p("m.json")), &model)
	for name, a := range map[string]float64{"neg.json": -1, "zero.json": 0} {
		model["alpha"].([]any)[0] = a
		out, _ := json.Marshal(model)
		os.WriteFile(p(name), out, 0o644)
	}
	mustRun(t, "fit", "lda", "--input", c, "--k", "5", "--seed", "7", "--out", p("m2.json"), "--progress", "off")
	evalJSON := mustRun(t, "eval", "--model", p("m2.json"), "--heldout", c, "--json")
	write("other-eval.json", evalJSON)
	write("abc-eval.json", `{"perplexity":"abc"}`)

	// A read-only output.
	write("readonly.json", "{}")
	os.Chmod(p("readonly.json"), 0o444)
	os.Mkdir(p("vocabdir"), 0o755)

	fit := func(input string, more ...string) []string {
		return append([]string{"fit", "lda", "--input", input, "--k", "2", "--out", p("out.json"), "--progress", "off"}, more...)
	}
	cases := []struct {
		name string
		args []string
		code int
		want []string
	}{
		// Severe: a panic inside a decoder, of streamfit's or arrow-go's.
		{"fit: a page header flipped (another writer)", fit(p("flipped.parquet"), "--k", "3"), 1, []string{"flipped.parquet", "row group 0", `column "`}},
		{"infer: a page header flipped", []string{"infer", "--model", p("other.json"), "--input", p("flipped.parquet"), "--out", p("out.parquet")}, 1, []string{"flipped.parquet", "row group 0"}},
		{"convert: a page header flipped", []string{"convert", p("flipped.parquet"), p("out.arrow")}, 1, []string{"flipped.parquet", "row group 0"}},
		{"convert: a long table's page header flipped", []string{"convert", p("long-flipped.parquet"), p("out.arrow")}, 1, []string{"long-flipped.parquet", "row group 0", `column "`}},
		{"npz: a stored count changed", fit(p("crc.npz")), 1, []string{"crc.npz", "data.npy", "CRC-32"}},
		{"text directory with binary files", []string{"vocab", "build", "--min-count", "1", "--out", p("out.txt"), p("texts")}, 0, []string{"4 binary files", "img0.png, img1.png, img2.png and 1 more"}},

		// Weak: the vocabulary not known.
		{"no vocabulary size", fit(p("novocab.arrow")), 1, []string{"novocab.arrow", "--vocab"}},
		{"Spark vectors with a fractional count", fit(p("spark-frac.parquet")), 1, []string{"spark-frac.parquet", "row 8", "0.5"}},
		{"Spark dense vectors", fit(p("spark-dense.parquet")), 0, nil},
		{"dataset of hidden files", fit(p("hidden")), 1, []string{"hidden", "holds no dataset file"}},
		// Matrix Market.
		{"Matrix Market counts 2e+00, lower-case banner", fit(market), 0, nil},
		// Text.
		{"byte order mark", []string{"vocab", "build", "--min-count", "1", "--max-df", "1", "--token-pattern", `\S+`, "--out", p("bom-vocab.txt"), bom}, 0, nil},
		{"CR-only line endings", []string{"vocab", "build", "--min-count", "1", "--max-df", "1", "--stop-words", "none", "--out", p("cr-vocab.txt"), cr}, 0, nil},
		{"Latin-1 bytes", []string{"vocab", "build", "--min-count", "1", "--max-df", "1", "--token-pattern", `\S+`, "--out", p("latin-vocab.txt"), latin}, 0, nil},
		// gensim.
		{"gensim dictionary without its first line", fit(market, "--vocab", gensim), 0, nil},
		// .npz.
		{"npz truncated", fit(p("cut.npz")), 1, []string{"cut.npz", "truncated: the file ends at byte 300"}},
		{"npz bad value's index", fit(p("value.npz")), 1, []string{"value.npz", "row 5000", "data.npy"}},
		// Other writers' Parquet.
		{"damaged footer", fit(p("footer.parquet")), 1, []string{"footer.parquet", "the footer"}},
		{"null list elements", fit(p("nulls.parquet")), 1, []string{"nulls.parquet", "row 1", "null"}},
		{"Spark vector smaller than its indices", fit(p("spark-small.parquet")), 1, []string{"spark-small.parquet", "size 5 with index 9"}},
		// Arrow IPC.
		{"inspect says Arrow IPC has no checksum", []string{"inspect", p("c.arrows")}, 0, nil},
		{"stream with a damaged start", []string{"inspect", p("badstart.arrows")}, 1, []string{"badstart.arrows", "not an Arrow IPC stream"}},
		// Flags.
		{"--checkpoint-every -5s", fit(c, "--checkpoint", p("ck"), "--checkpoint-every", "-5s"), 2, []string{"checkpoint-every"}},
		{"--max-df 1.5", []string{"vocab", "build", "--max-df", "1.5", "--out", p("out.txt"), bom}, 2, []string{"max-df"}},
		{"--max-df NaN", []string{"vocab", "build", "--max-df", "NaN", "--out", p("out.txt"), bom}, 2, []string{"max-df"}},
		{"--max-df -1", []string{"vocab", "build", "--max-df", "-1", "--out", p("out.txt"), bom}, 2, []string{"--max-df=-1"}},
		{"bad --token-pattern", []string{"vocab", "build", "--token-pattern", "(", "--out", p("out.txt"), bom}, 2, []string{"token-pattern"}},
		// Models given to report and topics.
		{"negative α", []string{"topics", "--model", p("neg.json")}, 1, []string{"neg.json", "alpha of topic 0 is -1"}},
		{"zero α", []string{"report", "--model", p("zero.json"), "--out", p("out.html")}, 1, []string{"zero.json", "alpha of topic 0 is 0"}},
		{"another model's evaluation", []string{"report", "--model", p("m.json"), "--eval", p("other-eval.json"), "--out", p("out.html")}, 1, []string{"other-eval.json", "another model"}},
		{"a figure that is not a number", []string{"report", "--model", p("m.json"), "--eval", p("abc-eval.json"), "--out", p("out.html")}, 1, []string{"abc-eval.json", "perplexity"}},
		{"report --theta given the corpus", []string{"report", "--model", p("m.json"), "--theta", c, "--out", p("out.html")}, 1, []string{"c.parquet", "holds documents"}},
		// Inputs and outputs.
		{"--vocab a directory", fit(bom, "--vocab", p("vocabdir")), 1, []string{"vocabdir", "is a directory"}},
		{"read-only output", fit(c, "--out", p("readonly.json")), 1, []string{"readonly.json", "read-only", "--force"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, msg, printed := cli(t, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d: %s", code, tc.code, strings.TrimSpace(msg+printed))
			}
			if tc.code == 0 {
				msg = printed // warnings
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("the message does not say %q: %s", w, strings.TrimSpace(msg))
				}
			}
			if tc.code != 0 {
				if tc.code == 1 && strings.Count(strings.TrimSpace(msg), "\n") > 0 {
					t.Errorf("more than one line: %s", msg)
				}
				for _, o := range []string{"out.json", "out.parquet", "out.arrow", "out.txt", "out.html"} {
					if _, err := os.Stat(p(o)); err == nil {
						t.Errorf("%s was written", o)
					}
				}
			}
			if m, _ := filepath.Glob(p(".*tmp-*")); len(m) > 0 {
				t.Errorf("left %v behind", m)
			}
			for _, o := range []string{"out.json", "out.txt"} {
				os.Remove(p(o))
			}
		})
	}

	// What the rows that succeed produced.
	vocabOf := func(name string) string { return string(readFile(t, p(name))) }
	if v := vocabOf("bom-vocab.txt"); strings.Contains(v, "\ufeff") || !strings.Contains(v, "w1\n") {
		t.Errorf("byte order mark: vocabulary %q", v)
	}
	if v := vocabOf("cr-vocab.txt"); strings.Count(v, "\n") != 6 {
		t.Errorf("CR-only lines: vocabulary %q", v)
	}
	if v := vocabOf("latin-vocab.txt"); strings.Contains(v, "\ufffd") {
		t.Errorf("Latin-1 bytes: vocabulary %q", v)
	}
	if _, out, _ := streamfit(t, "inspect", p("c.arrows")); !strings.Contains(out, "Arrow IPC has no checksum") {
		t.Errorf("inspect of an Arrow stream says nothing of its checksum:\n%s", out)
	}
	if code, msg, _ := cli(t, fit(c, "--out", p("readonly.json"), "--force")...); code != 0 {
		t.Errorf("--force: exit %d, %s", code, msg)
	}
}

// A fit whose input changes under it stops with an error naming the file,
// exit 1, no output: rewritten in place with the same bytes between two
// passes (only its time tells), or truncated while a pass reads it
// (memory-mapped: a SIGBUS, which ended the process with exit 2). The
// moment is the checkpoint a pass leaves.
func TestInputChangedDuringFit(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	mustRun(t, "gen", "lda", "--docs", "6000", "--vocab", "400", "--k", "4", "--doc-len", "60", "--out", p("docword.c.txt"), "--progress", "off")
	orig := readFile(t, p("docword.c.txt"))
	for _, tc := range []struct {
		name, trigger string
		change        func()
		want          string
	}{
		{"rewritten between passes", "pass-1.stats", func() {
			os.WriteFile(p("docword.c.txt"), orig, 0o644)
			later := time.Now().Add(time.Second)
			os.Chtimes(p("docword.c.txt"), later, later)
		}, "rewritten while streamfit read it"},
		{"truncated during a pass", "pass-2.partial.stats", func() { os.Truncate(p("docword.c.txt"), int64(len(orig)/5)) }, "changed while being read"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.WriteFile(p("docword.c.txt"), orig, 0o644)
			ck := p("ck-" + strings.Fields(tc.name)[0])
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() {
				for ctx.Err() == nil {
					if _, err := os.Stat(filepath.Join(ck, tc.trigger)); err == nil {
						tc.change()
						return
					}
					time.Sleep(time.Millisecond)
				}
			}()
			code, msg, _ := cli(t, "fit", "lda", "--input", p("docword.c.txt"), "--k", "4", "--spill", "off", "--batch-rows", "100", "--workers", "2",
				"--checkpoint", ck, "--checkpoint-every", "0s", "--em-passes", "0", "--out", p("m.json"), "--progress", "off")
			if code != 1 || !strings.Contains(msg, "docword.c.txt") || !strings.Contains(msg, tc.want) {
				t.Fatalf("exit %d, %q; want exit 1 naming the file: %q", code, strings.TrimSpace(msg), tc.want)
			}
			if _, err := os.Stat(p("m.json")); err == nil {
				t.Fatal("a model was written")
			}
		})
	}
}

// A damaged EM checkpoint is named and refused: one flipped bit in em.ckpt
// gave exit 0 and other topics than the uninterrupted run's.
func TestDamagedEMCheckpoint(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	c := smallCorpus(t, dir, "c.parquet")
	fit := []string{"fit", "lda", "--input", c, "--k", "5", "--checkpoint", p("ck"), "--out", p("m.json"), "--progress", "off"}
	mustRun(t, fit...)
	ckpt := filepath.Join(p("ck"), "em.ckpt")
	b := readFile(t, ckpt)
	b[len(b)/2] ^= 0x04
	os.WriteFile(ckpt, b, 0o644)
	os.Remove(p("m.json"))
	code, msg, _ := cli(t, fit...)
	if code != 1 || !strings.Contains(msg, ckpt) || !strings.Contains(msg, "checksum") {
		t.Fatalf("exit %d, %q; want exit 1 naming the checkpoint", code, strings.TrimSpace(msg))
	}
	if _, err := os.Stat(p("m.json")); err == nil {
		t.Fatal("a model was written from a damaged checkpoint")
	}
}
