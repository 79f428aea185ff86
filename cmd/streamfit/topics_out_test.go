package main

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"
)

// topics --out writes the printed table's words as rows, in the format its
// extension names, and refuses a name whose extension names none without
// writing anything.
func TestTopicsOut(t *testing.T) {
	p := tempPaths(t)
	mustRun(t, "gen", "lda", "--docs", "2000", "--vocab", "50", "--k", "3", "--doc-len", "30", "--seed", "2", "--out", p("c.parquet"), "--progress", "off")
	mustRun(t, "fit", "lda", "--input", p("c.parquet"), "--k", "3", "--seed", "1", "--em-passes", "0", "--out", p("m.json"), "--progress", "off")
	printed := mustRun(t, "topics", "--model", p("m.json"), "--top", "4")
	// The printed words of each topic, in order.
	var want [][]string
	for _, line := range strings.Split(strings.TrimSpace(printed), "\n") {
		want = append(want, strings.Fields(line[strings.Index(line, ":")+1:]))
	}
	check := func(name string, rows [][]string) {
		t.Helper()
		if len(rows) != 3*4 {
			t.Fatalf("%s: %d rows, want 12", name, len(rows))
		}
		for _, r := range rows {
			topic, _ := strconv.Atoi(r[0])
			rank, _ := strconv.Atoi(r[2])
			word := "#" + r[3]
			if r[4] != "" {
				word = r[4]
			}
			if got := want[topic][rank-1]; got != word {
				t.Errorf("%s: topic %d rank %d is %q, printed %q", name, topic, rank, word, got)
			}
			if pr, err := strconv.ParseFloat(r[5], 64); err != nil || !(pr > 0 && pr < 1) {
				t.Errorf("%s: probability %q", name, r[5])
			}
		}
	}
	for _, ext := range []string{"csv", "tsv"} {
		mustRun(t, "topics", "--model", p("m.json"), "--top", "4", "--out", p("t."+ext))
		r := csv.NewReader(strings.NewReader(string(readFile(t, p("t."+ext)))))
		if ext == "tsv" {
			r.Comma = '\t'
		}
		recs, err := r.ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(recs[0], ",") != "topic,weight,rank,term,word,probability" {
			t.Errorf("%s header %q", ext, recs[0])
		}
		check(ext, recs[1:])
	}
	mustRun(t, "topics", "--model", p("m.json"), "--top", "4", "--out", p("t.jsonl"))
	var rows [][]string
	for _, line := range strings.Split(strings.TrimSpace(string(readFile(t, p("t.jsonl")))), "\n") {
		var v struct {
			Topic, Rank, Term int
			Word              string
			Probability       float64
		}
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, []string{strconv.Itoa(v.Topic), "", strconv.Itoa(v.Rank), strconv.Itoa(v.Term), v.Word, strconv.FormatFloat(v.Probability, 'g', -1, 64)})
	}
	check("jsonl", rows)
	if out := mustRun(t, "topics", "--model", p("m.json"), "--top", "4", "--out", "-"); out != string(readFile(t, p("t.csv"))) {
		t.Errorf("--out - differs from the .csv file:\n%s", out)
	}
	code, _, msg := streamfit(t, "topics", "--model", p("m.json"), "--out", p("t.txt"))
	if code != 2 || !strings.Contains(msg, ".csv") {
		t.Errorf("--out t.txt: exit %d, %q; want a usage error naming the extensions", code, msg)
	}
	if _, err := os.Stat(p("t.txt")); err == nil {
		t.Error("a refused --out left a file")
	}
}
