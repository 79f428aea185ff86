package main

import (
	"flag"
	"strings"
)

// flagSynonyms are the names other topic-model and mixture tools give to
// a setting, and the flag that is streamfit's name for it.
var flagSynonyms = map[string]string{
	"num-topics": "k", "num_topics": "k", "n-components": "k", "n_components": "k",
	"topics": "k", "ntopics": "k", "n-topics": "k", "components": "k", "states": "k",
	"passes": "em-passes", "iterations": "em-passes", "max-iter": "em-passes", "max_iter": "em-passes",
	"random-state": "seed", "random_state": "seed", "n-jobs": "workers", "n_jobs": "workers", "jobs": "workers",
	"alpha": "alpha0", "output": "out", "o": "out", "i": "input", "in": "input", "vocabulary": "vocab",
}

// unknownFlagPrefix begins the message of a flag no command's flag set
// defines, before its name.
const unknownFlagPrefix = "unknown flag --"

// unknownFlag refuses, in one line, a flag fs does not define, naming the
// flag that was probably meant (another tool's name for it, or a near
// spelling), instead of flag's whole usage. Values of flags that take one
// are passed over (a negative number is a value, not a flag).
func unknownFlag(fs *flag.FlagSet, args []string) error {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return nil
		}
		if len(a) < 2 || a[0] != '-' {
			continue
		}
		name, hasValue := strings.TrimLeft(a, "-"), false
		if j := strings.IndexByte(name, '='); j >= 0 {
			name, hasValue = name[:j], true
		}
		if name == "" || name == "h" || name == "help" {
			continue
		}
		f := fs.Lookup(name)
		if f == nil {
			return usagef("%s%s%s (streamfit %s -h lists them)", unknownFlagPrefix, name, didYouMean(fs, name), fs.Name())
		}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); !hasValue && !(ok && b.IsBoolFlag()) {
			i++ // the next argument is this flag's value
		}
	}
	return nil
}

// didYouMean is ": did you mean --X?" for the flag of fs that name most
// likely stands for, or "".
func didYouMean(fs *flag.FlagSet, name string) string {
	if s, ok := flagSynonyms[strings.ToLower(name)]; ok && fs.Lookup(s) != nil {
		return "; did you mean --" + s + "?"
	}
	best, dist := "", 3 // at most two edits away
	fs.VisitAll(func(f *flag.Flag) {
		if d := editDistance(name, f.Name); d < dist {
			best, dist = f.Name, d
		}
	})
	if best == "" {
		return ""
	}
	return "; did you mean --" + best + "?"
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev, cur := make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
