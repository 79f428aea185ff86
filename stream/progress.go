package stream

import (
	"fmt"
	"sync/atomic"
	"time"
)

// Progress counts rows and bytes read by a pass. It is safe for concurrent use
// and a nil *Progress ignores every call, so readers can advance it freely.
type Progress struct {
	rows, bytes, total, totalRows atomic.Int64
	stage                         atomic.Pointer[string]
	start                         time.Time
	pass                          atomic.Pointer[passMark]
}

// passMark is where the current pass began: the rows read before it and
// when.
type passMark struct {
	rows int64
	at   time.Time
}

// StartPass marks the start of a pass over the input: String then counts
// the rows read since, at their own rate, so a fit's line says how far
// this pass is (not the sum over every pass so far).
func (p *Progress) StartPass() {
	if p != nil {
		p.pass.Store(&passMark{rows: p.rows.Load(), at: time.Now()})
	}
}

// NewProgress starts a progress counter; total is the expected number of bytes
// (0 when unknown), used for the ETA.
func NewProgress(total int64) *Progress {
	p := &Progress{start: time.Now()}
	p.total.Store(total)
	return p
}

// Add records rows and bytes read.
func (p *Progress) Add(rows, bytes int64) {
	if p == nil {
		return
	}
	p.rows.Add(rows)
	p.bytes.Add(bytes)
}

// SetTotal sets the number of bytes expected (e.g. passes × file size).
func (p *Progress) SetTotal(total int64) {
	if p != nil {
		p.total.Store(total)
	}
}

// SetTotalRows sets the number of rows expected, when known (a generator's
// document count); the ETA then follows rows instead of bytes.
func (p *Progress) SetTotalRows(total int64) {
	if p != nil {
		p.totalRows.Store(total)
	}
}

// SetStage names what the work is doing now (e.g. "pass 2 (third-moment)"
// or a solver's contraction); String prints it first, since the counts alone
// stop moving when a fit leaves its data passes.
func (p *Progress) SetStage(s string) {
	if p != nil {
		p.stage.Store(&s)
	}
}

// Rows is the number of rows read so far.
func (p *Progress) Rows() int64 {
	if p == nil {
		return 0
	}
	return p.rows.Load()
}

// Bytes is the number of bytes read so far.
func (p *Progress) Bytes() int64 {
	if p == nil {
		return 0
	}
	return p.bytes.Load()
}

// String renders one status line: rows, MB, rates, and the fraction done and
// ETA when a total (of rows, else of bytes) is known.
func (p *Progress) String() string {
	if p == nil {
		return ""
	}
	el := time.Since(p.start).Seconds()
	rows, by, tot := p.rows.Load(), p.bytes.Load(), p.total.Load()
	el = max(el, 1e-9)
	shown, shownEl := rows, el
	if m := p.pass.Load(); m != nil {
		shown, shownEl = rows-m.rows, max(time.Since(m.at).Seconds(), 1e-9)
	}
	s := fmt.Sprintf("%d rows (%.0f/s)", shown, float64(shown)/shownEl)
	if st := p.stage.Load(); st != nil && *st != "" {
		s = *st + " · read " + s
	}
	if by > 0 {
		mb := float64(by) / 1e6
		s += fmt.Sprintf(", %.1f MB (%.1f MB/s)", mb, mb/el)
	}
	var frac float64
	switch tr := p.totalRows.Load(); {
	case tr > 0:
		frac = float64(rows) / float64(tr)
	case tot > 0:
		frac = float64(by) / float64(tot)
	}
	if frac = min(frac, 1); frac > 0 {
		eta := time.Duration(el * (1 - frac) / frac * float64(time.Second)).Round(time.Second)
		s += fmt.Sprintf(", %.0f%%, ETA %s", 100*frac, eta)
	}
	return s
}
