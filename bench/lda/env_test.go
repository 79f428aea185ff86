package lda

import (
	"os"
	"strconv"
	"testing"
)

// gate skips t, a long opt-in test (what says what it runs), unless the
// environment variable env is set.
func gate(t *testing.T, env, what string) {
	t.Helper()
	if os.Getenv(env) == "" {
		t.Skipf("%s; set %s=1", what, env)
	}
}

// envInt returns the positive integer in the environment variable name, or
// def when it is unset; any other value fails tb.
func envInt(tb testing.TB, name string, def int) int {
	tb.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		tb.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}
