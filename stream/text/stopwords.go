package text

import (
	"bufio"
	"errors"
	"io"
	"strings"

	"github.com/streamfit/streamfit/stream"
)

// EnglishStopWords is the built-in "english" stop word list: pronouns,
// determiners, auxiliaries, conjunctions, prepositions and common adverbs that
// carry little topical signal. Every entry is lower case and at least two
// characters long (the default tokenizer never yields one-letter tokens).
var EnglishStopWords = strings.Fields(`
about above across after afterwards again against all almost alone along
already also although always am among amongst an and another any anybody
anyhow anyone anything anyway anywhere are aren around as at be became because
become becomes becoming been before beforehand behind being below beside
besides between beyond both but by can cannot could couldn did didn do does
doesn doing don done down during each either else elsewhere enough etc even
ever every everybody everyone everything everywhere except few for former
formerly from further had hadn has hasn have haven having he hence her here
hereafter hereby herein hers herself him himself his how however if in indeed
instead into is isn it its itself just least less ll many may me meanwhile
might mine more moreover most mostly much must my myself namely neither never
nevertheless next no nobody none noone nor not nothing now nowhere of off
often on once one only onto or other others otherwise our ours ourselves out
over own per perhaps rather re same several she should shouldn since so some
somebody somehow someone something sometime sometimes somewhere still such
than that the their theirs them themselves then thence there thereafter
thereby therefore therein these they this those though through throughout
thru thus to together too toward towards under unless until up upon us ve
very via was wasn we were weren what whatever when whence whenever where
whereafter whereas whereby wherein whereupon wherever whether which while
whither who whoever whole whom whose why will with within without won would
wouldn yet you your yours yourself yourselves
`)

// stopSet resolves Options.StopWords: "" or "english" is the built-in list,
// "none" is no list, anything else is a file with one word per line (blank lines
// and lines starting with '#' are skipped). Words from a file are lower-cased
// unless keepCase, so that they compare equal to the tokens they are meant to
// remove; the match is exact, like scikit-learn's.
func stopSet(spec string, keepCase bool) (map[string]struct{}, error) {
	switch spec {
	case "", "english":
		return toSet(EnglishStopWords), nil
	case "none":
		return nil, nil
	}
	f, err := stream.OpenFile(spec)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var words []string
	r := bufio.NewReader(f)
	var line int64
	for {
		s, err := r.ReadString('\n')
		if s != "" {
			line++
			w := strings.TrimSpace(s)
			if w != "" && !strings.HasPrefix(w, "#") {
				if !keepCase {
					w = strings.ToLower(w)
				}
				words = append(words, w)
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, stream.Errorf(spec, line+1, -1, "", stream.ErrCorrupt, "reading stop words: %v", err)
		}
	}
	return toSet(words), nil
}

func toSet(words []string) map[string]struct{} {
	m := make(map[string]struct{}, len(words))
	for _, w := range words {
		m[w] = struct{}{}
	}
	return m
}
