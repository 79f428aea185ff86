package stream

import (
	"strings"
	"testing"
	"time"
)

// The status line shows rows, MB and rates, and the fraction done with an
// ETA from the row total when one is set (a generator knows its document
// count), else from the byte total.
func TestProgressLine(t *testing.T) {
	p := NewProgress(0)
	p.Add(250, 3e6)
	if s := p.String(); !strings.Contains(s, "250 rows") || !strings.Contains(s, "3.0 MB") || strings.Contains(s, "ETA") {
		t.Fatalf("no total: %q", s)
	}
	p.SetTotalRows(1000)
	time.Sleep(20 * time.Millisecond)
	if s := p.String(); !strings.Contains(s, "25%") || !strings.Contains(s, "ETA") {
		t.Fatalf("row total: %q", s)
	}
	q := NewProgress(12e6)
	q.Add(10, 3e6)
	if s := q.String(); !strings.Contains(s, "25%") || !strings.Contains(s, "ETA") {
		t.Fatalf("byte total: %q", s)
	}
	q.SetStage("solve: contraction 3")
	if s := q.String(); !strings.HasPrefix(s, "solve: contraction 3 · read 10 rows") {
		t.Fatalf("with a stage: %q", s)
	}
	var none *Progress
	none.SetStage("x")
	none.Add(1, 1)
	none.SetTotalRows(5)
	if none.String() != "" {
		t.Fatal("a nil Progress printed something")
	}
}

// After StartPass the line counts the rows of the pass, not of every pass
// so far: a fit reading a 400-row file a second time is at row 150 of it.
func TestProgressRowsPerPass(t *testing.T) {
	p := NewProgress(0)
	p.SetStage("pass 1")
	p.StartPass()
	p.Add(400, 0)
	if s := p.String(); !strings.Contains(s, "read 400 rows") {
		t.Fatalf("first pass: %q", s)
	}
	p.SetStage("pass 2")
	p.StartPass()
	p.Add(150, 0)
	if s := p.String(); !strings.Contains(s, "read 150 rows") || p.Rows() != 550 {
		t.Fatalf("second pass: %q (rows in all %d)", s, p.Rows())
	}
	var none *Progress
	none.StartPass()
}
