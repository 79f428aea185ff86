package stream

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// Format is a file format the data layer can read or write. The format
// packages (stream/docword, stream/columnar, stream/text) register theirs in
// init; the public package stream links them all in.
type Format struct {
	// Name is the value of Options.Format that selects this format.
	Name string
	// Match reports how sure the format is that it can read path, given the first
	// bytes of the file (nil for a directory): 0 no, 1 by file name, 2 by content.
	Match func(path string, head []byte) int
	// The openers and creators the format supports; nil when it does not.
	OpenDocs    func(path string, o Options) (DocSource, error)
	OpenDense   func(path string, o Options) (DenseSource, error)
	OpenTexts   func(path string, o Options) (TextSource, error)
	CreateDocs  func(path string, o WriteOptions) (DocWriter, error)
	CreateDense func(path string, o WriteOptions) (DenseWriter, error)
}

var (
	formatsMu sync.RWMutex
	formats   = map[string]Format{}
)

// Register makes a format available to Open, OpenDense, OpenText and Create.
// It panics if the name is taken, like database/sql.Register.
func Register(f Format) {
	formatsMu.Lock()
	defer formatsMu.Unlock()
	if _, dup := formats[f.Name]; dup {
		panic("stream: format registered twice: " + f.Name)
	}
	formats[f.Name] = f
}

// Formats lists the registered format names, sorted.
func Formats() []string {
	formatsMu.RLock()
	defer formatsMu.RUnlock()
	names := make([]string, 0, len(formats))
	for n := range formats {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func lookup(name string) (Format, bool) {
	formatsMu.RLock()
	defer formatsMu.RUnlock()
	f, ok := formats[name]
	return f, ok
}

// Detect picks the format of an existing file or directory: the forced name if
// given, else the registered format most sure it matches (content beats name).
func Detect(path, forced string) (Format, error) {
	// Inputs are read more than once and at any position: a pipe or a
	// device can be neither (a FIFO read as "file is empty").
	if st, err := StatFile(path); err == nil && !st.IsDir() && !st.Mode().IsRegular() {
		return Format{}, Errorf(path, 0, -1, "", ErrFormat, "is not a regular file but a %s: inputs are read more than once, from any position; save the data to a file", fileKind(st.Mode()))
	}
	if forced != "" {
		f, ok := lookup(forced)
		if !ok {
			return Format{}, Errorf(path, 0, -1, "", ErrFormat, "format %q is not one of %s", forced, knownFormats())
		}
		return f, nil
	}
	st, err := StatFile(path)
	if err != nil {
		return Format{}, err
	}
	var head []byte
	if !st.IsDir() {
		if st.Size() == 0 {
			return Format{}, Errorf(path, 0, -1, "", ErrEmpty, "file is empty")
		}
		fh, err := OpenFile(path)
		if err != nil {
			return Format{}, err
		}
		head = make([]byte, 4096)
		n, err := io.ReadFull(fh, head)
		fh.Close()
		if err != nil && err != io.ErrUnexpectedEOF {
			return Format{}, fmt.Errorf("%s: %w", path, err)
		}
		head = head[:n]
	}
	return best(path, head)
}

// DetectName picks the format for a file to be created, from its name alone.
func DetectName(path, forced string) (Format, error) {
	if forced != "" {
		return Detect(path, forced)
	}
	return best(path, nil)
}

func best(path string, head []byte) (Format, error) {
	formatsMu.RLock()
	defer formatsMu.RUnlock()
	var top Format
	score, tie := 0, false
	for _, name := range sortedNames() {
		f := formats[name]
		if f.Match == nil {
			continue
		}
		s := f.Match(path, head)
		switch {
		case s > score:
			top, score, tie = f, s, false
		case s == score && s > 0:
			tie = true
		}
	}
	if score == 0 {
		return Format{}, Errorf(path, 0, -1, "", ErrFormat, "cannot tell the format from the name or content; known formats: %s", knownLocked())
	}
	if tie {
		return Format{}, Errorf(path, 0, -1, "", ErrFormat, "format is ambiguous; known formats: %s", knownLocked())
	}
	return top, nil
}

// knownFormats lists the registered formats for an error message, or, when
// none is, says which import links them in (a program that imports only this
// package has none).
func knownFormats() string {
	formatsMu.RLock()
	defer formatsMu.RUnlock()
	return knownLocked()
}

func knownLocked() string {
	if len(formats) == 0 {
		return `none is linked into this program (import _ "github.com/streamfit/streamfit/stream/formats", or any model package)`
	}
	return strings.Join(sortedNames(), ", ")
}

func sortedNames() []string {
	names := make([]string, 0, len(formats))
	for n := range formats {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// ErrIsText is returned (wrapped) by a format's OpenDocs when the file holds raw
// text rather than bag-of-words documents; Open then tokenizes it.
var ErrIsText = errors.New("input holds raw text")

// ErrNeedVocab is returned by Open for raw text input without Options.VocabPath.
var ErrNeedVocab = errors.New("raw text input needs a vocabulary")

// Tokenizer turns raw text into bag-of-words documents against the vocabulary in
// o.VocabPath; stream/text installs it with SetTokenizer.
type Tokenizer func(src TextSource, o Options) (DocSource, error)

var tokenizer Tokenizer

// SetTokenizer installs the function Open uses for raw text inputs.
func SetTokenizer(t Tokenizer) { tokenizer = t }

// Open opens a file (or a directory of text files) as a document source. Raw
// text (a text column, a directory of files, one document per line) is tokenized
// against the vocabulary file o.VocabPath.
func Open(path string, o Options) (DocSource, error) {
	f, err := Detect(path, o.Format)
	if err != nil {
		return nil, err
	}
	o = o.WithDefaults()
	if f.OpenDocs != nil {
		src, err := f.OpenDocs(path, o)
		if err == nil || !errors.Is(err, ErrIsText) {
			return src, err
		}
	}
	if f.OpenTexts == nil {
		if f.OpenDense != nil {
			// A wrong schema, not an unknown format: callers that try
			// documents first (inspect, convert) then read samples.
			return nil, Errorf(path, 0, -1, "", ErrSchema, "format %s holds dense samples, not documents", f.Name)
		}
		return nil, Errorf(path, 0, -1, "", ErrFormat, "format %s holds no documents", f.Name)
	}
	if tokenizer == nil {
		return nil, Errorf(path, 0, -1, "", ErrFormat, "raw text input needs a tokenizer and none is installed")
	}
	// The texts first: an input with no text at all (a directory of
	// hidden files) says so, instead of asking for a vocabulary.
	ts, err := f.OpenTexts(path, o)
	if err != nil {
		return nil, err
	}
	if o.VocabPath == "" {
		Close(ts)
		return nil, Errorf(path, 0, -1, "", ErrNeedVocab, "name a vocabulary file, built from the same text")
	}
	return tokenizer(ts, o)
}

// OpenDense opens a file as a source of dense sample rows.
func OpenDense(path string, o Options) (DenseSource, error) {
	f, err := Detect(path, o.Format)
	if err != nil {
		return nil, err
	}
	if f.OpenDense == nil {
		return nil, Errorf(path, 0, -1, "", ErrFormat, "format %s cannot hold dense samples (use Parquet, Arrow, .npy, .npz, CSV or TSV)", f.Name)
	}
	return f.OpenDense(path, o.WithDefaults())
}

// OpenText opens a file or directory as a source of raw text documents.
func OpenText(path string, o Options) (TextSource, error) {
	f, err := Detect(path, o.Format)
	if err != nil {
		return nil, err
	}
	if f.OpenTexts == nil {
		return nil, Errorf(path, 0, -1, "", ErrFormat, "format %s holds no raw text", f.Name)
	}
	return f.OpenTexts(path, o.WithDefaults())
}

// Create opens a writer of documents; the format comes from o.Format or the name.
func Create(path string, o WriteOptions) (DocWriter, error) {
	f, err := DetectName(path, o.Format)
	if err != nil {
		return nil, err
	}
	if f.CreateDocs == nil {
		return nil, Errorf(path, 0, -1, "", ErrFormat, "cannot write documents as %s", f.Name)
	}
	return f.CreateDocs(path, o)
}

// CreateDense opens a writer of dense rows; the format comes from o.Format or the name.
func CreateDense(path string, o WriteOptions) (DenseWriter, error) {
	f, err := DetectName(path, o.Format)
	if err != nil {
		return nil, err
	}
	if f.CreateDense == nil {
		return nil, Errorf(path, 0, -1, "", ErrFormat, "cannot write dense rows as %s", f.Name)
	}
	return f.CreateDense(path, o)
}

// TrimCompression strips a .gz or .zst suffix and reports which one it was
// ("gzip", "zstd" or "").
func TrimCompression(path string) (string, string) {
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".gz":
		return strings.TrimSuffix(path, filepath.Ext(path)), "gzip"
	case ".zst", ".zstd":
		return strings.TrimSuffix(path, filepath.Ext(path)), "zstd"
	}
	return path, ""
}

// Magic numbers of the compression formats, for content sniffing.
var (
	MagicGzip = []byte{0x1f, 0x8b}
	MagicZstd = []byte{0x28, 0xb5, 0x2f, 0xfd}
)

// Compression reports the compression of a file from its first bytes.
func Compression(head []byte) string {
	switch {
	case bytes.HasPrefix(head, MagicGzip):
		return "gzip"
	case bytes.HasPrefix(head, MagicZstd):
		return "zstd"
	}
	return ""
}

// TextChecksum says what checks a text file's bytes (a docword or text
// file, plain or compressed), from its first bytes, for Info.Checksum.
func TextChecksum(head []byte) string {
	switch Compression(head) {
	case "gzip":
		return "CRC-32 of the data (gzip), checked at the end of each pass"
	case "zstd":
		// The frame header descriptor's Content_Checksum_flag.
		if len(head) > 4 && head[4]&4 != 0 {
			return "checksum of each zstd frame, checked at its end"
		}
		return "none: the zstd frames carry no checksum"
	}
	return "none: a plain text file carries no checksum"
}

// fileKind names the kind of a file that is neither a regular file nor a
// directory.
func fileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0:
		return "device"
	}
	return "special file"
}
