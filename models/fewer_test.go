package models

import (
	"errors"
	"fmt"
	"testing"
)

// TestFitFewer checks the retries of a moment fit at fewer components: k
// capped at the dimension with its reason, then the error's count of
// positive directions, the first reason kept; another error ends it; no
// component at all gives got 0.
func TestFitFewer(t *testing.T) {
	var tried []int
	fit := func(positive int, other error) func(int) (int, error) {
		return func(k int) (int, error) {
			tried = append(tried, k)
			switch {
			case other != nil:
				return 0, other
			case k > positive:
				return 0, &ShortError{Positive: positive, Err: fmt.Errorf("only %d directions at k=%d", positive, k)}
			}
			return k * 10, nil
		}
	}
	for _, c := range []struct {
		k, most, positive int
		other             error
		got               int
		why               string
		tried             []int
	}{
		{4, 6, 9, nil, 4, "", []int{4}},
		{8, 6, 9, nil, 6, "k exceeds", []int{6}},
		{8, 6, 3, nil, 3, "k exceeds", []int{6, 3}},
		{5, 6, 2, nil, 2, "only 2 directions at k=5", []int{5, 2}},
		{5, 6, 0, nil, 0, "only 0 directions at k=5", []int{5}},
		{5, 6, 9, errors.New("bad row"), 0, "", []int{5}},
	} {
		tried = nil
		m, got, why, err := FitFewer(c.k, c.most, "k exceeds", fit(c.positive, c.other))
		if (err != nil) != (c.other != nil) || got != c.got || why != c.why || fmt.Sprint(tried) != fmt.Sprint(c.tried) || (got > 0 && m != got*10) {
			t.Errorf("k=%d, most %d, %d positive, error %v: model %d, got %d, why %q, err %v, tried %v; want got %d, why %q, tried %v",
				c.k, c.most, c.positive, c.other, m, got, why, err, tried, c.got, c.why, c.tried)
		}
	}
}
