package models

import (
	"errors"
)

// ShortError is a moment fit's failure that fewer components may not
// have: the second moment has only Positive usable directions (fewer than
// k), or a later stage failed at this k. Its message is Err's.
type ShortError struct {
	Positive int
	Err      error
}

// Error implements error.
func (e *ShortError) Error() string { return e.Err.Error() }

// Unwrap returns Err.
func (e *ShortError) Unwrap() error { return e.Err }

// FitFewer calls fit with k components, at most most of them (the
// dimension; mostWhy says why when k exceeds it), and again with fewer
// while it fails with a *ShortError: the smaller of one less and the
// error's Positive. It returns the first model fit gives and its number of
// components, or got 0 when none does; why is the first reason for fewer
// than k ("" when got is k). Any other error of fit ends it.
func FitFewer[M any](k, most int, mostWhy string, fit func(k int) (M, error)) (m M, got int, why string, err error) {
	if k > most {
		why = mostWhy
	}
	for c := min(k, most); c >= 1; {
		m, err = fit(c)
		var short *ShortError
		switch {
		case err == nil:
			return m, c, why, nil
		case !errors.As(err, &short):
			var zero M
			return zero, 0, "", err
		}
		if why == "" {
			why = err.Error()
		}
		c = min(c-1, short.Positive)
	}
	var zero M
	return zero, 0, why, nil
}
