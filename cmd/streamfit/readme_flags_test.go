package main

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/models"
)

// The README's table "Flags of each command" and the commands agree: every
// flag a row names is a flag of its command, every flag of a command is in
// its row, and every command (each model of a command with models, such as
// `fit lda|topic|…`) has a row. A row's flags may name groups in brackets,
// defined by rows of their own.
func TestREADMEFlags(t *testing.T) {
	rows, groups := readmeFlagTable(t, "../../README.md")
	expand := func(cmd string, cell []string) map[string]bool {
		out := map[string]bool{}
		var add func(tokens []string, depth int)
		add = func(tokens []string, depth int) {
			for _, tok := range tokens {
				if !strings.HasPrefix(tok, "[") {
					if out[tok] {
						t.Errorf("README, %s: %s is listed twice", cmd, tok)
					}
					out[tok] = true
					continue
				}
				g, ok := groups[tok]
				if !ok || depth > 5 {
					t.Errorf("README, %s: no group %s", cmd, tok)
					continue
				}
				add(g, depth+1)
			}
		}
		add(cell, 0)
		return out
	}
	for cmd, cell := range rows {
		want := expand(cmd, cell)
		got := helpFlags(t, strings.Fields(cmd))
		for f := range want {
			if !got[f] {
				t.Errorf("README lists %s for `%s`, which has no such flag", f, cmd)
			}
		}
		for f := range got {
			if !want[f] {
				t.Errorf("`%s` has the flag %s, which its README row does not list", cmd, f)
			}
		}
	}
	// Every command has a row; a command whose summary names its models
	// ("fit lda|topic|…") has a row per model.
	for name, c := range commands() {
		subs := regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + ` ([a-z-]+(?:\|[a-z-]+)+)`).FindStringSubmatch(c.summary)
		if subs == nil {
			if _, ok := rows[name]; !ok {
				t.Errorf("the command %s has no row in the README's flag table", name)
			}
			continue
		}
		for _, sub := range strings.Split(subs[1], "|") {
			if _, ok := rows[name+" "+sub]; !ok && sub != toyName {
				t.Errorf("the command %s %s has no row in the README's flag table", name, sub)
			}
		}
	}
	for _, k := range models.Kinds() {
		for _, cmd := range []string{"fit ", "stats "} {
			if _, ok := rows[cmd+k.Name()]; !ok && k.Name() != toyName {
				t.Errorf("%s%s has no row in the README's flag table", cmd, k.Name())
			}
		}
	}
}

// readmeFlagTable reads the table under "### Flags of each command": the
// flags (and group names) of each command, and the groups.
func readmeFlagTable(t *testing.T, path string) (rows, groups map[string][]string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, groups = map[string][]string{}, map[string][]string{}
	token := regexp.MustCompile(`--[a-z0-9-]+|\[[a-z-]+\]`)
	in := false
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "### Flags of each command"):
			in = true
			continue
		case !in:
			continue
		case strings.HasPrefix(line, "#"):
			in = false
			continue
		case !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "| command"):
			continue
		}
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		if len(cells) != 2 {
			t.Fatalf("README flag table: row %q does not have two cells", line)
		}
		name := strings.Trim(cells[0], "`")
		toks := token.FindAllString(cells[1], -1)
		if strings.HasPrefix(name, "[") {
			groups[name] = toks
		} else {
			if _, dup := rows[name]; dup {
				t.Errorf("README flag table: two rows for %s", name)
			}
			rows[name] = toks
		}
	}
	if len(rows) == 0 {
		t.Fatal(`README.md has no table under "### Flags of each command"`)
	}
	return rows, groups
}

// helpFlags returns the flags `streamfit ARGS -h` lists.
func helpFlags(t *testing.T, args []string) map[string]bool {
	t.Helper()
	var b bytes.Buffer
	code := run(context.Background(), append(slices.Clone(args), "-h"), &b)
	help := b.String()
	if code != 0 {
		t.Fatalf("streamfit %s -h: exit %d", strings.Join(args, " "), code)
	}
	flags := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^  -([a-z0-9-]+)`).FindAllStringSubmatch(help, -1) {
		flags["--"+m[1]] = true
	}
	if len(flags) == 0 {
		t.Fatalf("streamfit %s -h lists no flags:\n%s", strings.Join(args, " "), help)
	}
	return flags
}
