package main

import (
	"strings"
	"testing"
)

// TestUnknownFlagHint: a flag no model reads is refused in one line (exit 2)
// naming the flag meant — another tool's name for it, or a near spelling —
// without the whole usage; a negative number after a flag that takes a
// value is that value, not a flag.
func TestUnknownFlagHint(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"fit", "lda", "--num-topics", "50", "--input", "x"}, "unknown flag --num-topics; did you mean --k?"},
		{[]string{"fit", "lda", "--input", "x", "--em-pases=3"}, "unknown flag --em-pases; did you mean --em-passes?"},
		{[]string{"fit", "gmm", "--n_components", "5", "--input", "x"}, "did you mean --k?"},
		{[]string{"vocab", "build", "--zzzzzzzz", "x"}, "unknown flag --zzzzzzzz (streamfit"},
	} {
		code, _, msg := streamfit(t, tc.args...)
		if code != 2 || !strings.Contains(msg, tc.want) || strings.Count(msg, "\n") > 2 {
			t.Errorf("%q: exit %d, %q; want exit 2 and one line with %q", tc.args, code, msg, tc.want)
		}
	}
	code, _, msg := streamfit(t, "fit", "lda", "--em-sample", "-1", "--input", "/nonexistent/x.parquet")
	if code != 1 || strings.Contains(msg, "unknown flag") {
		t.Errorf("--em-sample -1: exit %d, %q; want the missing input's error", code, msg)
	}
}
