package rss

import (
	"testing"
	"time"
)

// Touching 64 MB raises the peak by about that much; Reset brings it back.
func TestPeakFollowsAllocation(t *testing.T) {
	if err := Reset(); err != nil {
		t.Skip(err)
	}
	p0, err := Peak()
	if err != nil {
		t.Skip(err)
	}
	buf := make([]byte, 64<<20)
	for i := range buf {
		buf[i] = byte(i)
	}
	p1, _ := Peak()
	if p1-p0 < 60<<20 {
		t.Fatalf("peak grew by %d bytes after touching 64 MB", p1-p0)
	}
	buf = nil
	if err := Reset(); err != nil {
		t.Fatal(err)
	}
	p2, _ := Peak()
	if p2 > p1-32<<20 {
		t.Fatalf("peak %d not reset (was %d)", p2, p1)
	}
	_ = buf
}

// The anonymous-memory sampler sees a 64 MB allocation held while it runs.
func TestSampleAnon(t *testing.T) {
	if _, err := Anon(); err != nil {
		t.Skip(err)
	}
	stop := SampleAnon(time.Millisecond)
	base, _ := Anon()
	buf := make([]byte, 64<<20)
	for i := range buf {
		buf[i] = byte(i)
	}
	time.Sleep(5 * time.Millisecond)
	peak := stop()
	if peak-base < 60<<20 {
		t.Fatalf("sampled peak %d, %d above the start after touching 64 MB", peak, peak-base)
	}
	_ = buf[len(buf)-1]
}
