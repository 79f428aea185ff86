package main

import (
	"strings"
	"testing"
	"time"

	"github.com/streamfit/streamfit/models/lda"
)

// TestPassShare: the progress line of a pass over every document gives
// its share and an ETA from the pass's rate; none for the sample's EM
// passes, the solve, or an unknown number of documents.
func TestPassShare(t *testing.T) {
	for _, tc := range []struct {
		pr   lda.Progress
		docs int64
		took time.Duration
		want string
	}{
		{lda.Progress{Pass: 2, Stage: "third-moment", Docs: 250}, 1000, 10 * time.Second, ", 25% of the pass, ETA 30s"},
		{lda.Progress{Pass: 3, Stage: "em", Docs: 1000}, 1000, 4 * time.Second, ", 100% of the pass, ETA 0s"},
		{lda.Progress{Pass: 3, Stage: "em-sample", Docs: 100}, 1000, time.Second, ""},
		{lda.Progress{Pass: 3, Stage: "em-sample-half", Docs: 100}, 1000, time.Second, ""},
		{lda.Progress{Pass: 1, Stage: "second-moment", Docs: 100}, -1, time.Second, ""},
		{lda.Progress{Stage: "solve", Docs: 5, Rows: 10}, 1000, time.Second, ""},
	} {
		if got := passShare(tc.pr, tc.docs, tc.took); got != tc.want {
			t.Errorf("%+v of %d in %v: %q, want %q", tc.pr, tc.docs, tc.took, got, tc.want)
		}
	}
}

// TestLDAStageBound: the progress line at the end of an EM pass gives the
// bound it measured, on every document, on the sample and on the sample's
// first half; other stages give none.
func TestLDAStageBound(t *testing.T) {
	for stage, want := range map[string]bool{"em": true, "em-sample": true, "em-sample-half": true, "third-moment": false, "em-sample-read": false} {
		got := ldaStage(lda.Progress{Pass: 4, Stage: stage, Done: true, Bound: -7.5})
		if strings.Contains(got, "bound -7.50000 per token") != want {
			t.Errorf("stage %s: %q; want the bound: %t", stage, got, want)
		}
	}
}
