package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/implicit/statsfile"
)

// TestShardsEveryModel is the acceptance test of the statistics route for
// every model: for each pass, the statistics of two shards of one Parquet
// file — split by row groups, and by row ranges — merged in either order
// are byte-identical to each other and, provenance aside (the inputs and
// shard count they record), to the statistics of the whole file; and
// `fit --from-stats` of the merge writes a model.json byte-identical to
// `fit` on the whole file. The sequences (hmm: 7 steps) and snapshot sets
// (markov, hmm-snapshot: 130 rows) are cut by both splits (row 1200, the
// boundary of row groups of 600 rows): each shard owns the groups that
// begin in it.
func TestShardsEveryModel(t *testing.T) {
	const groupRows, batchRows = 600, 200
	// The EM passes of gmm's and hmm's default fits need the rows: the
	// merge's fit is compared with the moment fit.
	emOff := []string{"--em-passes", "0"}
	cases := []struct {
		name   string
		gen    []string // streamfit gen arguments (model, sizes)
		model  string   // --model of stats and fit
		flags  []string // settings, given to stats and fit alike
		passes int      // the statistics passes (0: as many as the whole file's fit took)
		// fitOnly are flags of fit only (the solver's).
		fitOnly []string
		// em says that the fit refines by EM passes after the spectral fit
		// (lda, topic), which the statistics alone cannot run: the merge's
		// `fit --from-stats` is compared with `fit --em-passes 0`, and
		// `fit --from-stats S --input F` with `fit --input F`.
		em bool
	}{
		{name: "lda", gen: []string{"lda", "--docs", "3000", "--vocab", "60", "--k", "3", "--doc-len", "30"}, model: "lda",
			flags: []string{"--k", "3", "--alpha0", "1", "--seed", "5"}, passes: 2, em: true},
		// Batches cut by entries (--batch-entries): documents of about 24
		// entries in batches of about 340 rows, more than --batch-rows,
		// cut from each row group alike.
		{name: "lda-entries", gen: []string{"lda", "--docs", "3000", "--vocab", "60", "--k", "3", "--doc-len", "30"}, model: "lda",
			flags: []string{"--k", "3", "--alpha0", "1", "--seed", "5", "--batch-entries", "8000"}, passes: 2, em: true},
		{name: "topic", gen: []string{"topic", "--docs", "3000", "--vocab", "60", "--k", "3", "--doc-len", "30"}, model: "topic",
			flags: []string{"--k", "3", "--seed", "5"}, passes: 2, em: true},
		{name: "gmm", gen: []string{"gmm", "--rows", "3000", "--d", "8", "--k", "3"}, model: "gmm",
			flags: []string{"--k", "3", "--seed", "5"}, passes: 2, fitOnly: emOff},
		{name: "gmm-differing", gen: []string{"gmm", "--rows", "3000", "--d", "8", "--k", "3", "--differing"}, model: "gmm",
			flags: []string{"--k", "3", "--seed", "5", "--differing"}, passes: 2, fitOnly: emOff},
		{name: "ica", gen: []string{"ica", "--rows", "3000", "--d", "6", "--k", "3"}, model: "ica",
			flags: []string{"--k", "3", "--seed", "5"}},
		// k above d: the sources the data support (d of them), from the
		// merged statistics as from the file; the later passes' headers
		// carry the lower k and the one asked.
		{name: "ica-fewer", gen: []string{"ica", "--rows", "3000", "--d", "6", "--k", "3"}, model: "ica",
			flags: []string{"--k", "8", "--seed", "5"}},
		// The sketched path (d above --exact-dim): 2 + --power-iters (2)
		// passes of the range finder, each carrying the basis of the
		// merged pass before, then the whitened passes.
		{name: "gmm-sketch", gen: []string{"gmm", "--rows", "3000", "--d", "40", "--k", "3"}, model: "gmm",
			flags: []string{"--k", "3", "--seed", "5", "--exact-dim", "16"}, passes: 5, fitOnly: emOff},
		{name: "gmm-differing-sketch", gen: []string{"gmm", "--rows", "3000", "--d", "40", "--k", "3", "--differing"}, model: "gmm",
			flags: []string{"--k", "3", "--seed", "5", "--exact-dim", "16", "--differing"}, passes: 5, fitOnly: emOff},
		{name: "ica-sketch", gen: []string{"ica", "--rows", "3000", "--d", "40", "--k", "3"}, model: "ica",
			flags: []string{"--k", "3", "--seed", "5", "--exact-dim", "16"}},
		{name: "markov", gen: []string{"snapshots", "--sets", "30", "--per-set", "130", "--k", "3"}, model: "markov",
			flags: []string{"--k", "3", "--seed", "5", "--group-column", "group"}, passes: 2},
		{name: "hmm-snapshot", gen: []string{"snapshots", "--sets", "30", "--per-set", "130", "--k", "3", "--m", "6"}, model: "hmm-snapshot",
			flags: []string{"--k", "3", "--seed", "5", "--group-column", "group"}, passes: 2},
		// One-hot rows, k above the dimension: the states the moments
		// give, then copies, from the merged statistics as from the file.
		{name: "hmm-snapshot-discrete", gen: []string{"snapshots", "--sets", "30", "--per-set", "130", "--k", "3"}, model: "hmm-snapshot",
			flags: []string{"--k", "5", "--discrete", "--seed", "5", "--group-column", "group"}, passes: 2},
		{name: "multiview", gen: []string{"multiview", "--rows", "3000", "--k", "3"}, model: "multiview",
			flags: []string{"--k", "3", "--seed", "5"}, passes: 2},
		// k above the views' width: the components the cross moments of
		// the merged pass 1 support, in pass 2 and the fit alike.
		{name: "multiview-fewer", gen: []string{"multiview", "--rows", "3000", "--k", "3"}, model: "multiview",
			flags: []string{"--k", "40", "--seed", "5"}, passes: 2},
		{name: "hmm", gen: []string{"hmm", "--seqs", "300", "--len", "7", "--d", "6", "--k", "3"}, model: "hmm",
			flags: []string{"--k", "3", "--seed", "5", "--group-column", "group"}, passes: 2, fitOnly: emOff},
		{name: "hmm-windows", gen: []string{"hmm", "--seqs", "300", "--len", "7", "--d", "6", "--k", "3"}, model: "hmm",
			flags: []string{"--k", "3", "--seed", "5", "--group-column", "group", "--windows"}, passes: 2, fitOnly: emOff},
		// k above the dimension: the states the cross moments of the
		// merged pass 1 support, in pass 2 and the fit alike.
		{name: "hmm-fewer", gen: []string{"hmm", "--seqs", "300", "--len", "7", "--d", "6", "--k", "3"}, model: "hmm",
			flags: []string{"--k", "8", "--seed", "5", "--group-column", "group"}, passes: 2, fitOnly: emOff},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := tempPaths(t)
			in := p("data.parquet")
			mustRun(t, append([]string{"gen"}, append(c.gen, "--out", in, "--truth", p("truth.json"), "--row-group", fmt.Sprint(groupRows), "--seed", "7")...)...)
			common := append([]string{"--batch-rows", fmt.Sprint(batchRows), "--workers", "2", "--progress", "off"}, c.flags...)
			stats := func(pass int, basis, out string, sel ...string) {
				t.Helper()
				args := []string{"stats", c.model, "--phase", fmt.Sprint(pass), "--out", p(out)}
				if basis != "" {
					args = append(args, "--basis", p(basis))
				}
				mustRun(t, append(append(append(args, common...), sel...), in)...)
			}
			merge := func(out string, files ...string) {
				t.Helper()
				args := []string{"merge", "--out", p(out)}
				for _, f := range files {
					args = append(args, p(f))
				}
				mustRun(t, args...)
			}
			// Two row groups, then the rest; rows at the same boundary,
			// which is a batch boundary of the whole file's pass.
			split := 2 * groupRows
			sels := map[string][2][]string{
				"row groups": {{"--row-groups", "0:2"}, {"--row-groups", "2:"}},
				"row ranges": {{"--docs", fmt.Sprintf("0:%d", split)}, {"--docs", fmt.Sprintf("%d:", split)}},
			}
			fit := func(out string, args ...string) []byte {
				t.Helper()
				mustRun(t, append(append([]string{"fit", c.model, "--no-timing", "--progress", "off", "--out", p(out)}, c.flags...), append(c.fitOnly, args...)...)...)
				return readFile(t, p(out))
			}
			whole := []string{"--input", in, "--batch-rows", fmt.Sprint(batchRows), "--workers", "2"}
			spectral := whole
			if c.em {
				spectral = append(slices.Clone(whole), "--em-passes", "0")
			}
			want := fit("whole.json", spectral...)
			if sketched := slices.Contains(c.flags, "--exact-dim"); sketched != bytes.Contains(want, []byte(`"method": "sketch"`)) {
				t.Fatalf("the fit of the whole file does not take the path the case is for (sketched: %v):\n%s", sketched, want)
			}
			passes := c.passes
			if passes == 0 {
				// Polishing that stops by a tolerance: the passes the
				// fit of the whole file took.
				var m struct {
					Stats struct{ Passes int } `json:"stats"`
				}
				if err := json.Unmarshal(want, &m); err != nil || m.Stats.Passes < 3 {
					t.Fatalf("the whole file's fit records %d passes (%v)", m.Stats.Passes, err)
				}
				passes = m.Stats.Passes
			}
			basis := map[string]string{"whole": "", "row groups": "", "row ranges": ""}
			for pass := 1; pass <= passes; pass++ {
				whole := fmt.Sprintf("whole%d.stats", pass)
				stats(pass, basis["whole"], whole)
				basis["whole"] = whole
				for _, name := range []string{"row groups", "row ranges"} {
					tag := fmt.Sprintf("%s%d", name[4:], pass)
					a, b := "a-"+tag+".stats", "b-"+tag+".stats"
					stats(pass, basis[name], a, sels[name][0]...)
					stats(pass, basis[name], b, sels[name][1]...)
					ab, ba := "ab-"+tag+".stats", "ba-"+tag+".stats"
					merge(ab, a, b)
					merge(ba, b, a)
					if !bytes.Equal(readFile(t, p(ab)), readFile(t, p(ba))) {
						t.Errorf("pass %d, %s: the merges in either order differ", pass, name)
					}
					if got, want := statsBody(t, p(ab)), statsBody(t, p(whole)); !bytes.Equal(got, want) {
						t.Errorf("pass %d, %s: the merged statistics differ from the whole file's (beyond the inputs they record)", pass, name)
					}
					basis[name] = ab
				}
			}
			for _, name := range []string{"row groups", "row ranges"} {
				if got := fit("merged.json", "--from-stats", p(basis[name])); !bytes.Equal(got, want) {
					t.Errorf("%s: fit --from-stats of the merged statistics differs from the fit of the whole file:\n%s\n%s", name, got, want)
				}
			}
			if !c.em {
				return
			}
			// Without documents the EM passes cannot run, and a note says so.
			code, _, msg := streamfit(t, "fit", c.model, "--from-stats", p(basis["row groups"]), "--no-timing", "--out", p("note.json"))
			if code != 0 || !strings.Contains(msg, "EM passes need the documents") {
				t.Errorf("fit --from-stats without --input: exit %d, no note that EM needs --input:\n%s", code, msg)
			}
			// The EM passes over the documents after the spectral fit of
			// the merge: the default fit of the whole file.
			want = fit("whole-em.json", whole...)
			if bytes.Equal(want, readFile(t, p("whole.json"))) {
				t.Fatal("the EM passes left the spectral fit as it was")
			}
			if got := fit("merged-em.json", append([]string{"--from-stats", p(basis["row groups"])}, whole...)...); !bytes.Equal(got, want) {
				t.Errorf("fit --from-stats S --input F differs from fit --input F:\n%s\n%s", got, want)
			}
		})
	}
}

// statsBody returns the statistics file at path encoded again without its
// provenance (the inputs and the number of shards it records).
func statsBody(t *testing.T, path string) []byte {
	t.Helper()
	model, err := statsfile.PeekModel(path)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if implicit.TopicModel(model) {
		st, err := implicit.ReadTopicStats(path)
		if err != nil {
			t.Fatal(err)
		}
		st.Header.Inputs, st.Header.Shards = nil, 0
		err = st.Encode(context.Background(), &buf)
	} else {
		st, err := implicit.ReadDenseStats(path)
		if err != nil {
			t.Fatal(err)
		}
		st.Header.Inputs, st.Header.Shards = nil, 0
		err = st.Encode(context.Background(), &buf)
	}
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
