// Package statsfile is the container format of streamfit's statistics
// files: the bytes that frame the statistics of one pass over one shard
// (magic, version, a checksummed JSON header, a zstd-compressed payload, its
// length and checksum, an end marker), the header that says what the
// statistics describe and which statistics may be merged, the errors a
// reader reports, and atomic writing and checked reading of the files.
//
// The payload is each accumulator's own encoding: package implicit encodes
// and decodes its accumulators (TopicStats, DenseStats), and package
// models/lda its EM statistics (EMStats), through Write and Read, as
// image/png uses compress/zlib. A payload may lay its arrays out as
// sections (Section, WriteSections, ReadSections), chunked so that a merge
// adds them to exact totals as they arrive. This package holds no
// statistics and imports no model.
package statsfile

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"hash/fnv"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/streamfit/streamfit/stream"
)

// A statistics file holds the accumulators of one pass (phase) of a fit over
// one shard of the data, or over several merged shards. Its layout is
//
//	magic    8 bytes  "SFSTATS\n"
//	version  uint32   little endian (Version)
//	hlen     uint32   length of the header
//	hcrc     uint32   CRC-32C of the header
//	header   hlen bytes of JSON (Header)
//	payload  one zstd stream, written by the statistics' own encoder
//	plen     uint64   length of the compressed payload
//	crc      uint32   CRC-32C of the compressed payload
//	end      8 bytes  "SFSTEND\n"
//
// Writer and reader stream the payload through the compressor, so neither
// holds more than the statistics themselves and a chunk; the header is
// verified before anything is allocated from it, the payload when it has
// been read.
const (
	magic   = "SFSTATS\n"
	endMark = "SFSTEND\n"
	// Trailer is the length of the bytes after the payload (plen, crc,
	// end marker).
	Trailer = 8 + 4 + 8
)

// Version is the version of the layout Write writes; Read refuses any
// other. Version 2 stored Z2 and the unwhitened M1 in phase 2 (no YY) and
// named the kind of sketch; version 3 is binary (sections instead of JSON
// numbers) and adds the exact totals and the inputs covered
// (Header.Inputs).
const Version = 3

// Errors of Read, wrapped with the file name by the file readers; test
// with errors.Is.
var (
	ErrMagic     = errors.New("not a streamfit statistics file (bad magic)")
	ErrVersion   = errors.New("unsupported statistics file version")
	ErrTruncated = errors.New("statistics file is truncated")
	ErrChecksum  = errors.New("statistics file checksum mismatch (corrupt)")
	// ErrModel reports statistics of another kind of model than the
	// reader's (LDA's, a dense model's, an EM pass's).
	ErrModel = errors.New("statistics of another kind of model")
	// ErrIncompatible reports a merge of statistics that do not describe
	// the same fit; the error is an *IncompatibleError naming the field.
	ErrIncompatible = errors.New("incompatible statistics")
	// ErrOverlap reports a merge of statistics that cover the same input.
	ErrOverlap = errors.New("the statistics share an input, which a merge would count twice")
)

// MaxHeader bounds the header a reader accepts, so a corrupt length cannot
// make it allocate without limit; payload encoders bound their own
// metadata by it too.
const MaxHeader = 1 << 20

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// Header says what a statistics file describes. Two files can be merged
// only when every field but Shards and Inputs is equal (Compatible) and
// they share no input (Disjoint).
type Header struct {
	// Model is "lda" or "topic" (the single-topic model), whose statistics
	// are implicit.TopicStats, "em" for an EM pass of either (lda.EMStats),
	// or a dense model ("gmm", ...), whose are implicit.DenseStats.
	Model string `json:"model"`
	// Phase is the pass: for LDA 1 (sketch of the second moment, E2·Ω, or with Power > 0 a
	// power pass E2·Q) or 2 (whitened third moment for the stored whitening
	// W).
	Phase int `json:"phase"`
	// Power numbers the power passes of the randomized whitening: 0 for the
	// first sketch (Ω from Seed), i > 0 for the i-th power pass, whose
	// projection Q (stored as W) was computed from the merged statistics of
	// power pass i−1. Readers that predate it see a phase-1 file whose basis
	// is not Seed's Ω and refuse it as such.
	Power int `json:"power,omitempty"`
	// D is the vocabulary size, K the number of topics, Cols the columns of
	// the projection the pass used (Ω in phase 1, W in phase 2).
	D    int `json:"d"`
	K    int `json:"k"`
	Cols int `json:"cols"`
	// Alpha0 is the topic models' field, not the container's: LDA's α₀,
	// on which its moment corrections and so its statistics depend (0 for
	// the single-topic model and the dense models, whose settings are in
	// Params). It stays here because version 3 of the layout stores the key
	// in every header: moving it to the topic models' settings would change
	// the bytes of every statistics file and need a new version.
	Alpha0 float64 `json:"alpha0"`
	// Seed determines Ω (phase 1) and the solver's restarts.
	Seed uint64 `json:"seed"`
	// Exact says that phase 1 multiplies by the d×d identity (exact
	// whitening); otherwise Ω is a random test matrix of the kind Sketch
	// names with K+Oversample columns.
	Exact      bool   `json:"exact"`
	Sketch     string `json:"sketch,omitempty"`
	Oversample int    `json:"oversample"`
	// VocabHash fingerprints the vocabulary (see VocabHash).
	VocabHash uint64 `json:"vocab_hash"`
	// Basis fingerprints the projection (see implicit.Fingerprint).
	Basis uint64 `json:"basis"`
	// Shards counts the shard statistics merged into this one.
	Shards int `json:"shards"`
	// Run identifies the fit a checkpoint of a pass belongs to (its input
	// and settings); empty for shard statistics.
	Run string `json:"run,omitempty"`
	// Batches is the number of batches a checkpoint without exact totals
	// holds (a resumed pass skips them); with exact totals it is
	// the exact totals' batches, and 0 for shard statistics.
	Batches int64 `json:"batches,omitempty"`
	// Inputs lists the input files the statistics cover (shard.Describe);
	// merges refuse statistics that share one.
	Inputs []Input `json:"inputs,omitempty"`
	// Params are the settings of a dense model's fit that its statistics
	// depend on (the model's own JSON); statistics of different settings
	// are not merged. Empty for LDA and the single-topic model, whose
	// settings are the fields above.
	Params json.RawMessage `json:"params,omitempty"`
}

// Input describes an input file that statistics cover.
type Input struct {
	// Path is the path as given on the command line.
	Path    string    `json:"path"`
	Size    int64     `json:"size"`
	ModTime time.Time `json:"mtime"`
	// Fingerprint identifies the content cheaply: a hash of the size and
	// of the first and last 64 KiB. Two inputs with the same fingerprint
	// are taken to be the same data (a copy counts as the same file).
	Fingerprint string `json:"fingerprint"`
	// Docs, when set, is the range [Docs[0], Docs[1]) of documents of the
	// file the statistics cover (Docs[1] < 0: to the end).
	Docs *[2]int64 `json:"docs,omitempty"`
}

// overlaps reports whether a and b cover some document in common.
func (a Input) overlaps(b Input) bool {
	if a.Fingerprint != b.Fingerprint {
		return false
	}
	ra, rb := a.docs(), b.docs()
	return ra[0] < end(rb[1]) && rb[0] < end(ra[1])
}

func (a Input) docs() [2]int64 {
	if a.Docs == nil {
		return [2]int64{0, -1}
	}
	return *a.Docs
}

func end(hi int64) int64 {
	if hi < 0 {
		return math.MaxInt64
	}
	return hi
}

// String names the input and its range of documents.
func (a Input) String() string {
	if a.Docs == nil {
		return a.Path
	}
	r := *a.Docs
	if r[1] < 0 {
		return fmt.Sprintf("%s (documents %d:)", a.Path, r[0])
	}
	return fmt.Sprintf("%s (documents %d:%d)", a.Path, r[0], r[1])
}

// Covers returns an input of h that covers documents of in (the same file
// content, overlapping ranges), if there is one.
func (h Header) Covers(in Input) (Input, bool) {
	for _, x := range h.Inputs {
		if x.overlaps(in) {
			return x, true
		}
	}
	return Input{}, false
}

// VocabHash fingerprints a vocabulary of d words (words may be nil when
// unknown, and then only d counts).
func VocabHash(d int, words []string) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d\n", d)
	for _, w := range words {
		h.Write([]byte(w))
		h.Write([]byte{0})
	}
	return h.Sum64()
}

// IncompatibleError names the field in which two statistics differ.
type IncompatibleError struct {
	Field string
	A, B  any
}

// Error names the field and the two values that differ.
func (e *IncompatibleError) Error() string {
	return fmt.Sprintf("%v: %s differs: %v vs %v", ErrIncompatible, e.Field, e.A, e.B)
}

// Unwrap lets errors.Is(err, ErrIncompatible) hold.
func (e *IncompatibleError) Unwrap() error { return ErrIncompatible }

// Compatible reports, as an *IncompatibleError, the first header field in
// which h and o differ (Shards and Inputs excepted).
func (h Header) Compatible(o Header) error {
	type field struct {
		name string
		a, b any
	}
	fields := []field{
		{"model", h.Model, o.Model},
		{"phase", h.Phase, o.Phase},
		{"power pass", h.Power, o.Power},
		{"d (vocabulary size)", h.D, o.D},
		{"k", h.K, o.K},
		{"projection columns", h.Cols, o.Cols},
		{"alpha0", h.Alpha0, o.Alpha0},
		{"seed", h.Seed, o.Seed},
		{"exact whitening", h.Exact, o.Exact},
		{"sketch", h.Sketch, o.Sketch},
		{"oversample", h.Oversample, o.Oversample},
		{"vocabulary", fmt.Sprintf("%016x", h.VocabHash), fmt.Sprintf("%016x", o.VocabHash)},
		{"basis", fmt.Sprintf("%016x", h.Basis), fmt.Sprintf("%016x", o.Basis)},
		{"run", h.Run, o.Run},
		{"settings", string(h.Params), string(o.Params)},
	}
	for _, f := range fields {
		if f.a != f.b {
			return &IncompatibleError{Field: f.name, A: f.a, B: f.b}
		}
	}
	return nil
}

// Disjoint reports, as ErrOverlap, an input that o's header shares with
// h's.
func (h Header) Disjoint(o Header) error {
	for _, in := range o.Inputs {
		if x, ok := h.Covers(in); ok {
			return fmt.Errorf("%w: %v and %v (fingerprint %s)", ErrOverlap, x, in, in.Fingerprint)
		}
	}
	return nil
}

// AddShards adds the shards and inputs of o to h, the inputs in a
// canonical order, so that merges in any order give the same header.
func (h *Header) AddShards(o Header) {
	h.Shards += o.Shards
	h.Inputs = append(h.Inputs, o.Inputs...)
	slices.SortFunc(h.Inputs, func(a, b Input) int {
		return cmp.Or(cmp.Compare(a.Fingerprint, b.Fingerprint), cmp.Compare(a.docs()[0], b.docs()[0]), cmp.Compare(a.Path, b.Path))
	})
}

// DecodeParams checks that h describes statistics of one of models and
// decodes their settings (Params) into p.
func (h Header) DecodeParams(p any, models ...string) error {
	if !slices.Contains(models, h.Model) {
		return fmt.Errorf("%s statistics, not %s", h.Model, strings.Join(models, " or "))
	}
	if err := json.Unmarshal(h.Params, p); err != nil {
		return fmt.Errorf("statistics settings: %w", err)
	}
	return nil
}

// Write writes a statistics file to w: the preamble and the header h, then
// the payload that body writes to the compressor, then the trailer. It
// stops with ctx's error when ctx ends (checked at every write of the
// compressed payload).
func Write(ctx context.Context, w io.Writer, h *Header, body func(zw io.Writer) error) error {
	hdr, err := json.Marshal(h)
	if err != nil {
		return err
	}
	var pre bytes.Buffer
	pre.WriteString(magic)
	binary.Write(&pre, binary.LittleEndian, uint32(Version))
	binary.Write(&pre, binary.LittleEndian, uint32(len(hdr)))
	binary.Write(&pre, binary.LittleEndian, crc32.Checksum(hdr, crcTable))
	pre.Write(hdr)
	if _, err := w.Write(pre.Bytes()); err != nil {
		return err
	}
	cw := &crcWriter{ctx: ctx, w: w}
	zw, err := zstd.NewWriter(cw, zstd.WithEncoderConcurrency(1))
	if err != nil {
		return err
	}
	defer zw.Close()
	if err := body(zw); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	var tail [Trailer]byte
	binary.LittleEndian.PutUint64(tail[:], uint64(cw.n))
	binary.LittleEndian.PutUint32(tail[8:], cw.crc)
	copy(tail[12:], endMark)
	_, err = w.Write(tail[:])
	return err
}

// crcWriter writes to w, counting the bytes and their CRC-32C, and fails
// once ctx has ended.
type crcWriter struct {
	ctx context.Context
	w   io.Writer
	n   int64
	crc uint32
}

func (c *crcWriter) Write(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	c.crc = crc32.Update(c.crc, crcTable, p[:n])
	return n, err
}

// Create writes a statistics file to path atomically, its bytes written by
// encode: an interrupted write (ctx ended, an error) removes its temporary
// file and never leaves a file that looks complete; a killed one leaves
// only a hidden temporary file (".NAME.tmp-*"), which no reader opens and a
// later Create of the same path removes once it is older than
// stream.StaleTemp. An error of encode is returned naming the file.
func Create(ctx context.Context, path string, encode func(context.Context, io.Writer) error) error {
	f, err := stream.CreateAtomic(path)
	if err != nil {
		return err
	}
	if err := encode(ctx, f); err != nil {
		f.Abort()
		return fmt.Errorf("%s: %w", path, err)
	}
	return f.Commit()
}

// Open decodes the statistics file at path with decode (the reader of one
// kind of statistics); an error names the file.
func Open[S any](path string, decode func(r io.ReaderAt, size int64) (*S, error)) (*S, error) {
	var s *S
	err := With(path, func(r io.ReaderAt, size int64) (err error) {
		s, err = decode(r, size)
		return err
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// With calls fn with the file at path and its size; an error of fn is
// returned naming the file.
func With(path string, fn func(r io.ReaderAt, size int64) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if err := fn(f, st.Size()); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// PeekModel returns the model named in the header of the statistics file
// at path, after checking the file's magic, version and header checksum.
func PeekModel(path string) (string, error) {
	var model string
	errPeeked := errors.New("peeked")
	err := With(path, func(r io.ReaderAt, size int64) error {
		return Read(r, size, func(h *Header) error {
			model = h.Model
			return errPeeked
		}, nil)
	})
	if !errors.Is(err, errPeeked) {
		return "", err
	}
	return model, nil
}

// Read reads a statistics file of size bytes from r: it checks the
// preamble, decodes the verified header and hands it to head, lets payload
// read the decompressed payload, and checks the payload's checksum. An
// error of head stops it; a damaged payload is reported as ErrChecksum
// whatever error payload gave.
func Read(r io.ReaderAt, size int64, head func(*Header) error, payload func(zr io.Reader) error) error {
	const preLen = len(magic) + 12 // magic, version, hlen, hcrc
	pre := make([]byte, preLen)
	n, _ := r.ReadAt(pre, 0)
	switch {
	case n < len(magic) && bytes.HasPrefix([]byte(magic), pre[:n]):
		return ErrTruncated
	case !bytes.HasPrefix(pre[:n], []byte(magic)):
		return ErrMagic
	case n < len(magic)+4:
		return ErrTruncated
	}
	if v := binary.LittleEndian.Uint32(pre[len(magic):]); v != Version {
		return fmt.Errorf("%w: version %d, expected %d (written by another version of streamfit; recompute the statistics)", ErrVersion, v, Version)
	}
	if n < preLen {
		return ErrTruncated
	}
	hlen := int64(binary.LittleEndian.Uint32(pre[len(magic)+4:]))
	hcrc := binary.LittleEndian.Uint32(pre[len(magic)+8:])
	if hlen > MaxHeader {
		return fmt.Errorf("%w: header of %d bytes", ErrChecksum, hlen)
	}
	start := int64(len(pre)) + hlen // of the compressed payload
	if size < start+Trailer {
		return ErrTruncated
	}
	hdr := make([]byte, hlen)
	if _, err := r.ReadAt(hdr, int64(len(pre))); err != nil {
		return err
	}
	if got := crc32.Checksum(hdr, crcTable); got != hcrc {
		return fmt.Errorf("%w: header checksum stored %08x, computed %08x", ErrChecksum, hcrc, got)
	}
	var tail [Trailer]byte
	if _, err := r.ReadAt(tail[:], size-Trailer); err != nil {
		return err
	}
	if string(tail[12:]) != endMark {
		return fmt.Errorf("%w: no end marker (cut short, or bytes after it)", ErrTruncated)
	}
	plen, crc := int64(binary.LittleEndian.Uint64(tail[:])), binary.LittleEndian.Uint32(tail[8:])
	if plen != size-Trailer-start {
		return fmt.Errorf("%w: payload of %d bytes where the file holds %d", ErrChecksum, plen, size-Trailer-start)
	}
	var h Header
	if err := json.Unmarshal(hdr, &h); err != nil {
		return fmt.Errorf("statistics header: %w", err)
	}
	if err := head(&h); err != nil {
		return err
	}
	cr := &crcReader{r: io.NewSectionReader(r, start, plen)}
	// The writer's window is zstd's default (8 MiB); a damaged frame header
	// claiming more is refused instead of allocated.
	zr, err := zstd.NewReader(cr, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true), zstd.WithDecoderMaxWindow(8<<20))
	if err != nil {
		return err
	}
	defer zr.Close()
	err = payload(zr)
	// The checksum covers every compressed byte, so a damaged payload is
	// reported as such whatever error decoding it gave.
	io.Copy(io.Discard, cr)
	if cr.crc != crc {
		return fmt.Errorf("%w: stored %08x, computed %08x", ErrChecksum, crc, cr.crc)
	}
	if err != nil {
		return fmt.Errorf("statistics payload: %w", err)
	}
	return nil
}

// crcReader reads from r, keeping the CRC-32C of what it read.
type crcReader struct {
	r   io.Reader
	crc uint32
}

func (c *crcReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.crc = crc32.Update(c.crc, crcTable, p[:n])
	return n, err
}
