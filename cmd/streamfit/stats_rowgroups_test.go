package main

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/stream"
	"github.com/streamfit/streamfit/stream/columnar"
	"github.com/streamfit/streamfit/stream/synth"
)

// TestStatsRowGroups shards one Parquet file and one Arrow IPC file by row
// groups (record batches): the statistics of three ranges, merged, give
// byte for byte the model of the statistics of the whole file, in both
// phases; shards that share a row group are refused by merge.
func TestStatsRowGroups(t *testing.T) {
	const d, k = 120, 4
	docs := corpusDocs(t, synth.LDAConfig{Docs: 3000, Vocab: d, K: k, Alpha0: 1, DocLen: 50, Seed: 43})
	p := tempPaths(t)
	common := []string{"--k", "4", "--alpha0", "1", "--seed", "3", "--batch-rows", "100", "--workers", "2", "--progress", "off"}
	for _, name := range []string{"c.parquet", "c.arrow"} {
		t.Run(name, func(t *testing.T) {
			in := p(name)
			writeDocsFile(t, in, docs, 0, docs.Len(), stream.WriteOptions{Terms: d, RowGroupRows: 250})
			stats := func(phase, out, basis, groups string) {
				t.Helper()
				args := append(statsArgs(p, phase, out, basis), in)
				if groups != "" {
					args = append(args, "--row-groups", groups)
				}
				mustRun(t, append(args, common...)...)
			}
			fit := func(stats string) []byte { t.Helper(); return fitFrom(t, p, stats, name+".json") }
			stats("1", "all1.stats", "", "")
			stats("2", "all2.stats", "all1.stats", "")
			whole := fit("all2.stats")

			ranges := []string{":3", "3:8", "8:"}
			for i, r := range ranges {
				stats("1", string(rune('a'+i))+"1.stats", "", r)
			}
			mergeFiles(t, p, "m1.stats", "c1.stats", "a1.stats", "b1.stats")
			for i, r := range ranges {
				stats("2", string(rune('a'+i))+"2.stats", "m1.stats", r)
			}
			mergeFiles(t, p, "m2.stats", "b2.stats", "c2.stats", "a2.stats")
			if got := fit("m2.stats"); !bytes.Equal(got, whole) {
				t.Errorf("model from row-group shards :3, 3:8, 8: differs from the whole file's:\n%s\n%s", got, whole)
			}

			// Row groups 2:4 hold documents 500:1000, which shard :3 covers too.
			stats("1", "o1.stats", "", "2:4")
			code, _, msg := streamfit(t, "merge", "--out", p("bad.stats"), p("a1.stats"), p("o1.stats"))
			if code == 0 || !strings.Contains(msg, "share an input") || !strings.Contains(msg, "(documents 500:1000)") {
				t.Errorf("merge of overlapping row-group shards: exit %d: %s", code, msg)
			}
			if _, err := os.Stat(p("bad.stats")); !os.IsNotExist(err) {
				t.Error("a refused merge left its output")
			}
			// --append takes row groups too, refusing those already covered.
			code, _, msg = streamfit(t, append([]string{"stats", "--append", p("a1.stats"), "--row-groups", "2:4", "--out", p("bad.stats"), in}, common...)...)
			if code == 0 || !strings.Contains(msg, "already covers it (as "+in+" (documents 0:750))") {
				t.Errorf("append of row groups 2:4 to :3: exit %d: %s", code, msg)
			}
			mustRun(t, append([]string{"stats", "--append", p("a1.stats"), "--row-groups", "3:8", "--out", p("ab1.stats"), in}, common...)...)
		})
	}
}

// TestStatsRowGroupsRefused checks every refusal of --row-groups: exit 2,
// the file named with what to do instead, and no output file.
func TestStatsRowGroupsRefused(t *testing.T) {
	docs := corpusDocs(t, synth.LDAConfig{Docs: 1000, Vocab: 80, K: 3, Alpha0: 1, DocLen: 20, Seed: 44})
	p := tempPaths(t)
	for name, layout := range map[string]string{"c.parquet": "", "c.arrows": "", "long.parquet": "long", "docword.c.txt": ""} {
		writeDocsFile(t, p(name), docs, 0, docs.Len(), stream.WriteOptions{Terms: 80, RowGroupRows: 250, Layout: layout})
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--row-groups", "2:9", p("c.parquet")}, p("c.parquet") + ": row groups 2:9 are beyond the file's 4 row groups (0:4)"},
		{[]string{"--row-groups", "4:", p("c.parquet")}, "row groups 4: are beyond the file's 4 row groups"},
		{[]string{"--row-groups", "3:1", p("c.parquet")}, `--row-groups="3:1": want FIRST:END`},
		{[]string{"--row-groups", "1", p("c.parquet")}, `--row-groups="1": want FIRST:END`},
		{[]string{"--row-groups", "1:2", "--docs", "0:10", p("c.parquet")}, "--docs and --row-groups both select"},
		{[]string{"--row-groups", "1:2", p("c.parquet"), p("c.parquet")}, "--row-groups takes one INPUT file, not 2"},
		{[]string{"--row-groups", "1:2", p("c.arrows")}, p("c.arrows") + ": an Arrow IPC stream has no index of its record batches"},
		{[]string{"--row-groups", "1:2", p("docword.c.txt")}, p("docword.c.txt") + ": docword input has no row groups"},
		{[]string{"--row-groups", "0:1", p("long.parquet")}, "convert the file to the lists layout"},
	} {
		args := append([]string{"stats", "--k", "3", "--progress", "off", "--out", p("bad.stats")}, c.args...)
		code, _, msg := streamfit(t, args...)
		if code != 2 || !strings.Contains(msg, c.want) {
			t.Errorf("stats %s: exit %d, %q; want exit 2 and %q", strings.Join(c.args, " "), code, strings.TrimSpace(msg), c.want)
		}
		if _, err := os.Stat(p("bad.stats")); !os.IsNotExist(err) {
			t.Fatalf("stats %s left its output", strings.Join(c.args, " "))
		}
	}
	if code, _, msg := streamfit(t, "inspect", "--row-groups", p("c.arrows")); code != 2 || !strings.Contains(msg, "no index of its record batches") {
		t.Errorf("inspect --row-groups of an Arrow IPC stream: exit %d, %q", code, msg)
	}
	// Phase 2 refuses the same way (after reading its basis).
	mustRun(t, "stats", "--k", "3", "--progress", "off", "--out", p("b.stats"), p("c.parquet"))
	code, _, msg := streamfit(t, "stats", "--phase", "2", "--basis", p("b.stats"), "--row-groups", "5:", "--progress", "off", "--out", p("bad.stats"), p("c.parquet"))
	if code != 2 || !strings.Contains(msg, "beyond the file's 4 row groups") {
		t.Errorf("phase 2 beyond the row groups: exit %d, %q", code, msg)
	}
}

// TestInspectPieces checks the row groups inspect lists (--json) against
// the file as written.
func TestInspectPieces(t *testing.T) {
	docs := corpusDocs(t, synth.LDAConfig{Docs: 1000, Vocab: 80, K: 3, Alpha0: 1, DocLen: 20, Seed: 45})
	p := tempPaths(t)
	for _, c := range []struct{ name, unit string }{{"c.parquet", "row group"}, {"c.arrow", "record batch"}} {
		writeDocsFile(t, p(c.name), docs, 0, docs.Len(), stream.WriteOptions{Terms: 80, RowGroupRows: 300})
		var in, meta inspection
		if err := json.Unmarshal([]byte(mustRun(t, "inspect", "--json", "--progress", "off", p(c.name))), &in); err != nil {
			t.Fatal(err)
		}
		// --row-groups lists the same from the metadata alone.
		if err := json.Unmarshal([]byte(mustRun(t, "inspect", "--json", "--row-groups", p(c.name))), &meta); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(meta.Pieces, in.Pieces) || meta.Rows != in.Rows || meta.PieceUnit != in.PieceUnit {
			t.Errorf("%s: inspect --row-groups gives %d rows in %+v, inspect %d rows in %+v", c.name, meta.Rows, meta.Pieces, in.Rows, in.Pieces)
		}
		rows := []int64{300, 300, 300, 100}
		if in.PieceUnit != c.unit || len(in.Pieces) != len(rows) {
			t.Fatalf("%s: %q %+v", c.name, in.PieceUnit, in.Pieces)
		}
		var first int64
		for i, got := range in.Pieces {
			want := columnar.Piece{Index: i, FirstRow: first, Rows: rows[i], Bytes: got.Bytes}
			if got != want || got.Bytes <= 0 {
				t.Errorf("%s piece %d: %+v, want %+v with bytes > 0", c.name, i, got, want)
			}
			first += rows[i]
		}
	}
}
