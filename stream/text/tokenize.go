package text

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/streamfit/streamfit/stream"
)

// DefaultTokenPattern is the Go regular expression the default tokenizer is
// equivalent to: maximal runs of at least two letters, decimal digits or
// underscores, the Unicode-aware reading of scikit-learn's `(?u)\b\w\w+\b`.
// The default is implemented by a hand-written scanner (several times faster
// than the regexp engine); passing this pattern, scikit-learn's spelling, or
// nothing as Options.TokenPattern selects it.
const DefaultTokenPattern = `[\p{L}\p{Nd}_]{2,}`

// sklearnPattern is scikit-learn's default token_pattern; Go's regexp does not
// accept the (?u) flag, so it is recognised by name rather than compiled.
const sklearnPattern = `(?u)\b\w\w+\b`

// Tokenizer splits raw text into tokens as configured by stream.Options:
// lower-casing (unless KeepCase), the token pattern and the stop words. It is
// immutable and safe for concurrent use.
type Tokenizer struct {
	keepCase bool
	re       *regexp.Regexp // nil selects the default scanner
	group    bool           // the pattern has one capture group: it is the token
	stop     map[string]struct{}
	// stopHint[c] has bit n set when some stop word of n < 32 bytes starts
	// with byte c: most tokens are ruled out as stop words without hashing.
	stopHint [256]uint32
	stopLong bool // some stop word has 32 bytes or more
}

// NewTokenizer builds the tokenizer o describes. A custom TokenPattern is a Go
// regular expression (RE2 syntax) matched against the lower-cased text; when it
// has exactly one capture group, the group is the token, as in scikit-learn.
// Empty matches and matches containing a line break are dropped, since a
// vocabulary file holds one word per line, and so are matches holding
// U+FFFD, which stands for bytes that were not UTF-8; a byte order mark is
// taken out of a match.
func NewTokenizer(o stream.Options) (*Tokenizer, error) {
	t := &Tokenizer{keepCase: o.KeepCase}
	switch o.TokenPattern {
	case "", DefaultTokenPattern, sklearnPattern:
	default:
		re, err := regexp.Compile(o.TokenPattern)
		if err != nil {
			return nil, fmt.Errorf("token pattern: %w", err)
		}
		t.re, t.group = re, re.NumSubexp() == 1
	}
	stop, err := stopSet(o.StopWords, o.KeepCase)
	if err != nil {
		return nil, fmt.Errorf("stop words: %w", err)
	}
	t.stop = stop
	for w := range stop {
		if len(w) >= 32 {
			t.stopLong = true
		} else if w != "" {
			t.stopHint[w[0]] |= 1 << len(w)
		}
	}
	return t, nil
}

// isStop reports whether tok is a stop word.
func (t *Tokenizer) isStop(tok string) bool {
	if tok == "" || (len(tok) < 32 && t.stopHint[tok[0]]&(1<<len(tok)) == 0) || (len(tok) >= 32 && !t.stopLong) {
		return false
	}
	_, stop := t.stop[tok]
	return stop
}

// Tokens appends the tokens of text, in order, to dst and returns it.
func (t *Tokenizer) Tokens(dst []string, text string) []string {
	t.each(text, nil, func(tok string) { dst = append(dst, strings.Clone(tok)) })
	return dst
}

// each calls fn for every token of text and returns buf, the scratch space used
// for lower-casing, for reuse by the next call. The string fn receives may alias
// buf: it is valid only during the call and must be cloned to be kept. This is
// what lets the counting and lookup loops run without an allocation per token.
func (t *Tokenizer) each(text string, buf []byte, fn func(tok string)) []byte {
	if t.re != nil {
		t.eachRegexp(text, fn)
		return buf
	}
	n := len(text)
	for i := 0; i < n; {
		// Skip to the start of a run of word characters.
		if c := text[i]; c < utf8.RuneSelf {
			if asciiClass[c] == 0 {
				i++
				continue
			}
		} else if r, size := utf8.DecodeRuneInString(text[i:]); !isWord(r) {
			i += size
			continue
		}
		start, runes, upper, ascii := i, 0, false, true
		for i < n {
			if c := text[i]; c < utf8.RuneSelf {
				k := asciiClass[c]
				if k == 0 {
					break
				}
				upper = upper || k == classUpper
				i++
			} else {
				r, size := utf8.DecodeRuneInString(text[i:])
				if !isWord(r) {
					break
				}
				ascii = false
				upper = upper || unicode.ToLower(r) != r
				i += size
			}
			runes++
		}
		if runes < 2 {
			continue
		}
		tok := text[start:i]
		if upper && !t.keepCase {
			buf = lower(buf[:0], tok, ascii)
			tok = unsafe.String(unsafe.SliceData(buf), len(buf))
		}
		if !t.isStop(tok) {
			fn(tok)
		}
	}
	return buf
}

func (t *Tokenizer) eachRegexp(text string, fn func(tok string)) {
	if !t.keepCase {
		text = strings.ToLower(text)
	}
	emit := func(tok string) {
		// U+FFFD stands for bytes that were not UTF-8: a token holding it
		// is no word, and U+FEFF (a byte order mark) is no part of one.
		if strings.Contains(tok, "\ufeff") {
			tok = strings.ReplaceAll(tok, "\ufeff", "")
		}
		if tok == "" || strings.ContainsAny(tok, "\r\n\ufffd") {
			return
		}
		if !t.isStop(tok) {
			fn(tok)
		}
	}
	if t.group {
		for _, m := range t.re.FindAllStringSubmatchIndex(text, -1) {
			if m[2] >= 0 {
				emit(text[m[2]:m[3]])
			}
		}
		return
	}
	for _, m := range t.re.FindAllStringIndex(text, -1) {
		emit(text[m[0]:m[1]])
	}
}

// lower appends the lower-case form of tok to dst, rune by rune as
// strings.ToLower does.
func lower(dst []byte, tok string, ascii bool) []byte {
	if ascii {
		for i := 0; i < len(tok); i++ {
			c := tok[i]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			dst = append(dst, c)
		}
		return dst
	}
	for _, r := range tok {
		dst = utf8.AppendRune(dst, unicode.ToLower(r))
	}
	return dst
}

// isWord reports whether r may be part of a token: a letter, a decimal digit or
// an underscore (Go's \p{L}, \p{Nd} and _). utf8.RuneError, which stands for
// invalid bytes, is none of these.
func isWord(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)
}

// ASCII character classes for the scanner's fast path.
const (
	classNone  = 0
	classWord  = 1 // lower-case letter, digit, underscore
	classUpper = 2 // upper-case letter
)

var asciiClass = func() (t [utf8.RuneSelf]uint8) {
	for c := range utf8.RuneSelf {
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '_':
			t[c] = classWord
		case 'A' <= c && c <= 'Z':
			t[c] = classUpper
		}
	}
	return t
}()
