package main

import (
	"strings"
	"testing"

	"github.com/streamfit/streamfit/stream/synth"
)

// The demo's topics read as words: each printed topic's top words come from
// one theme of the built-in word list, and every theme is found once.
func TestDemoTopicsAreThemes(t *testing.T) {
	theme := map[string]string{}
	for _, th := range synth.Themes {
		for _, w := range th.Words {
			theme[w] = th.Name
		}
	}
	out := mustRun(t, "demo", "--docs", "5000", "--k", "6", "--dir", t.TempDir())
	found := map[string]bool{}
	for line := range strings.Lines(out) {
		if !strings.HasPrefix(line, "topic ") {
			continue
		}
		_, words, ok := strings.Cut(line, ":")
		if !ok {
			t.Fatalf("topic line without words: %q", line)
		}
		names := map[string]bool{}
		for _, w := range strings.Fields(words) {
			names[theme[w]] = true
		}
		if len(names) != 1 || names[""] {
			t.Errorf("topic mixes themes %v: %q", names, line)
		}
		for n := range names {
			if found[n] {
				t.Errorf("theme %s found twice", n)
			}
			found[n] = true
		}
	}
	for _, th := range synth.Themes[:6] {
		if !found[th.Name] {
			t.Errorf("theme %s not among the topics:\n%s", th.Name, out)
		}
	}
}
