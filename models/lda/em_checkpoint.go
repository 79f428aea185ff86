package lda

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/streamfit/streamfit/stream"
)

// emCheckpoint saves the model after every EM pass in the fit's checkpoint
// directory, as em.ckpt (one file, replaced atomically), and resumes from
// it: a JSON header line (emHeader), then α (k float64) and the topics
// word-major (d·k float64), little endian, bit for bit, then (when the
// passes on the sample go on) the warm starts of the sample's documents
// and of the held-out sample's (warmStarts.write). The passes that follow
// a resumed one are those of an uninterrupted fit, so the model is the
// same. The pass cap is not part of
// the settings a checkpoint must share: a refinement resumed with a higher
// cap continues. Within a pass, at most once every Checkpoint.Every, the
// pass's statistics so far are saved as em.partial (a JSON line emPartial,
// then the statistics of the sample's first half when the second is
// running, the running statistics (EMAcc.Encode), and the warm starts the
// pass has written for the documents of the batches it committed), and a
// resumed pass continues after the batches they hold.
//
// Files of an older version (1: no "version", streamfit before the warm
// starts were saved; 2: before the passes on the sample's first half and
// the held-out sample's warm starts) are
// refused where the passes on the sample go on, since resumed they would
// not give the model of an uninterrupted fit (version 1's starts are
// lost; version 2's passes all ran on the whole sample); elsewhere they
// are read as before. A partial pass of an older version is run again.
type emCheckpoint struct {
	path, partial string
	run           string
	every         time.Duration
}

// emCkptVersion is the version of em.ckpt and em.partial.
const emCkptVersion = 3

// emPartial is the first line of em.partial: the pass, whether it runs in
// halves and which half is running (the first half's statistics precede
// the running ones when it is 1), and the warm starts' documents (0: none
// follow) and their checksum (warmStarts.keys).
type emPartial struct {
	Run      string `json:"run"`
	Pass     int    `json:"pass"`
	Version  int    `json:"version,omitempty"`
	Halves   bool   `json:"halves,omitempty"`
	Half     int    `json:"half,omitempty"`
	WarmDocs int    `json:"warm_docs,omitempty"`
	WarmKeys uint32 `json:"warm_keys,omitempty"`
}

// emHeader is the first line of an EM checkpoint.
type emHeader struct {
	Run    string    `json:"run"`
	K      int       `json:"k"`
	D      int       `json:"d"`
	Bounds []float64 `json:"bounds"`
	Done   bool      `json:"done"`
	// Online EM's step count and the tokens its statistics stand for.
	Steps int64   `json:"steps,omitempty"`
	Total float64 `json:"total,omitempty"`
	// The passes on the sample of the documents, whether they ended, the
	// held-out sample's bounds, whether the last was undone, and whether
	// the parameters before the last M-step on the sample follow the
	// topics (they may undo the next one).
	SamplePasses int  `json:"sample_passes,omitempty"`
	SampleDone   bool `json:"sample_done,omitempty"`
	// The passes on the sample's first half, whether they ended, and
	// whether the last one's M-step was undone.
	HalfPasses int       `json:"half_passes,omitempty"`
	HalfDone   bool      `json:"half_done,omitempty"`
	HalfUndone bool      `json:"half_undone,omitempty"`
	HeldOut    []float64 `json:"held_out,omitempty"`
	Undone     bool      `json:"undone,omitempty"`
	Prev       bool      `json:"prev,omitempty"`
	Gain       *float64  `json:"gain,omitempty"`
	// The version (emCkptVersion; 0 before warm starts were saved), and
	// the warm starts' documents (0: none follow) and their checksum, the
	// sample's and the held-out sample's (which follow the sample's).
	Version      int    `json:"version,omitempty"`
	WarmDocs     int    `json:"warm_docs,omitempty"`
	WarmKeys     uint32 `json:"warm_keys,omitempty"`
	HeldWarmDocs int    `json:"held_warm_docs,omitempty"`
	HeldWarmKeys uint32 `json:"held_warm_keys,omitempty"`
}

// emResumed is what a loaded EM checkpoint holds beyond the state: its
// version, and its warm starts, restored once the sample is in memory
// (restoreWarm).
type emResumed struct {
	version            int
	warmDocs, heldDocs int
	warmKeys, heldKeys uint32
	warm               []byte
}

func newEMCheckpoint(c *checkpointer, em EM) *emCheckpoint {
	if c == nil {
		return nil
	}
	run := fmt.Sprintf("%s|em tol=%g fit-alpha=%t eta=%g estep-tol=%g estep-prune=%g estep-overrelax=%g", c.run, em.Tol, em.FitAlpha, em.Eta, em.EStepTol, em.EStepPrune, em.EStepOverrelax)
	if em.Online {
		run += fmt.Sprintf(" online mini-batch=%d kappa=%g tau0=%g", em.MiniBatch, em.Kappa, em.Tau0)
	} else {
		run += fmt.Sprintf(" relax=%g", em.Relax)
		if em.Sample != 0 || em.FullPasses != DefaultFullPasses {
			run += fmt.Sprintf(" sample=%d full-passes=%d", em.Sample, em.FullPasses)
		}
		if em.SampleTol != em.Tol/DefaultSampleTolDiv || em.FullGain != em.SampleTol {
			run += fmt.Sprintf(" sample-tol=%g full-gain=%g", em.SampleTol, em.FullGain)
		}
	}
	return &emCheckpoint{
		path: filepath.Join(c.Dir, "em.ckpt"), partial: filepath.Join(c.Dir, "em.partial"), every: max(0, c.Every), run: run,
	}
}

// save writes the state after a pass, with the warm starts for the next
// pass (warm's cur; nil: none) and for the held-out sample's next score
// (held's cur; saved only with warm's).
func (c *emCheckpoint) save(st *emState, warm, held *warmStarts) error {
	p := &st.params
	h := emHeader{Run: c.run, K: p.K, D: p.D, Bounds: st.bounds, Done: st.done, SamplePasses: st.samplePasses, SampleDone: st.sampleDone,
		HalfPasses: st.halfPasses, HalfDone: st.halfDone, HalfUndone: st.halfUndone, HeldOut: st.heldOut, Undone: st.undone, Prev: st.prevBeta != nil, Version: emCkptVersion}
	if !math.IsNaN(st.gain) {
		h.Gain = &st.gain
	}
	if warm != nil {
		h.WarmDocs, h.WarmKeys = len(warm.done), warm.keys
		if held != nil {
			h.HeldWarmDocs, h.HeldWarmKeys = len(held.done), held.keys
		}
	}
	if err := writeCheckpoint(c.path, h, func(w io.Writer) error {
		vs := [][]float64{p.Alpha, p.Beta}
		if h.Prev {
			vs = append(vs, st.prevAlpha, st.prevBeta)
		}
		if err := writeFloats(w, vs...); err != nil || warm == nil {
			return err
		}
		if err := warm.write(w, &warm.cur, nil); err != nil || h.HeldWarmDocs == 0 {
			return err
		}
		return held.write(w, &held.cur, nil)
	}); err != nil {
		return err
	}
	os.Remove(c.partial) // the statistics of the pass just saved
	return nil
}

// load reads the saved state into st (whose shape it must have) and
// reports whether there was one.
func (c *emCheckpoint) load(st *emState) (bool, error) {
	var h emHeader
	return readCheckpoint(c.path, &h, func(r io.Reader) error {
		if h.Run != c.run || h.K != st.params.K || h.D != st.params.D {
			return fmt.Errorf("checkpoint %s is of another fit: %q, this fit %q (use another directory, or remove it to start over)", c.path, h.Run, c.run)
		}
		st.bounds, st.done, st.samplePasses, st.sampleDone = h.Bounds, h.Done, h.SamplePasses, h.SampleDone
		st.halfPasses, st.halfDone, st.halfUndone = h.HalfPasses, h.HalfDone, h.HalfUndone
		st.heldOut, st.undone = h.HeldOut, h.Undone
		if h.Gain != nil {
			st.gain = *h.Gain
		}
		vs := [][]float64{st.params.Alpha, st.params.Beta}
		if h.Prev {
			st.prevAlpha, st.prevBeta = make([]float64, len(st.params.Alpha)), make([]float64, len(st.params.Beta))
			vs = append(vs, st.prevAlpha, st.prevBeta)
		}
		if err := readFloats(r, vs...); err != nil {
			return fmt.Errorf("checkpoint %s is truncated: %v (remove it to start the refinement over)", c.path, err)
		}
		st.resumed = &emResumed{version: max(h.Version, 1), warmDocs: h.WarmDocs, warmKeys: h.WarmKeys, heldDocs: h.HeldWarmDocs, heldKeys: h.HeldWarmKeys}
		if h.WarmDocs > 0 {
			var err error
			if st.resumed.warm, err = io.ReadAll(r); err != nil {
				return fmt.Errorf("checkpoint %s: %v", c.path, err)
			}
		}
		return nil
	})
}

// checkVersion refuses a checkpoint of an older version whose passes on
// the sample go on.
func (c *emCheckpoint) checkVersion(st *emState, em EM) error {
	if st.resumed == nil || st.resumed.version >= emCkptVersion || !st.sampling(em) || st.samplePasses == 0 {
		return nil
	}
	why := "ran every EM pass on the sample over the whole sample"
	if st.resumed.version < 2 {
		why = "did not save the warm starts of the EM passes on the sample"
	}
	return fmt.Errorf("checkpoint %s was written by an older streamfit, which %s; resumed, the refinement would not give the model of an uninterrupted fit (remove it to start the EM passes over; the other passes' checkpoints are kept)", c.path, why)
}

// restoreWarm sets warm's starts for the next pass (cur), and held's for
// the held-out sample's next score, to those of the checkpoint st was
// loaded from, if it saved any; they must be of the same documents.
func (c *emCheckpoint) restoreWarm(st *emState, warm, held *warmStarts) error {
	r := st.resumed
	if r == nil || r.warmDocs == 0 {
		return nil
	}
	st.resumed = nil
	if r.warmDocs != len(warm.done) || r.warmKeys != warm.keys || r.heldDocs != len(held.done) || r.heldDocs > 0 && r.heldKeys != held.keys {
		return fmt.Errorf("checkpoint %s holds the warm starts of another sample of the documents (%d and %d held out, this fit's %d and %d; use the same input and settings, or remove it to start the EM passes over)", c.path, r.warmDocs, r.heldDocs, len(warm.done), len(held.done))
	}
	br := bytes.NewReader(r.warm)
	_, err := warm.read(br, &warm.cur)
	if err == nil && r.heldDocs > 0 {
		_, err = held.read(br, &held.cur)
	}
	if err != nil || br.Len() != 0 {
		return fmt.Errorf("checkpoint %s: its warm starts do not read back (%v; remove it to start the EM passes over)", c.path, err)
	}
	return nil
}

// saveOnline writes online EM's state after a pass: the header, then α,
// the running weight statistics and the running expected counts (the
// topics follow from them).
func (c *emCheckpoint) saveOnline(st *onlineState) error {
	p := &st.params
	h := emHeader{Run: c.run, K: p.K, D: p.D, Bounds: st.bounds, Done: st.done, Steps: st.t, Total: st.total}
	return writeCheckpoint(c.path, h, func(w io.Writer) error { return writeFloats(w, p.Alpha, st.sa, st.s) })
}

// loadOnline reads online EM's saved state into st and reports whether
// there was one.
func (c *emCheckpoint) loadOnline(st *onlineState, em EM) (bool, error) {
	var h emHeader
	return readCheckpoint(c.path, &h, func(r io.Reader) error {
		if h.Run != c.run || h.K != st.params.K || h.D != st.params.D {
			return fmt.Errorf("checkpoint %s is of another fit: %q, this fit %q (use another directory, or remove it to start over)", c.path, h.Run, c.run)
		}
		st.bounds, st.done, st.t, st.total = h.Bounds, h.Done, h.Steps, h.Total
		if err := readFloats(r, st.params.Alpha, st.sa, st.s); err != nil {
			return fmt.Errorf("checkpoint %s is truncated: %v (remove it to start the refinement over)", c.path, err)
		}
		topicsMAP(&st.params, st.s, em.Eta, 1)
		return nil
	})
}

// emPartialPass is the statistics of a pass in progress: run, the running
// ones, after first, the first half's (complete; nil unless the second
// half runs); warm, the pass's warm starts (nil: none).
type emPartialPass struct {
	halves     bool
	half       int
	first, run *EMAcc
	warm       *warmStarts
}

// savePartial saves the statistics of EM pass number pass (counted from 1)
// so far, and the warm starts it wrote for the documents committed.
func (c *emCheckpoint) savePartial(pass int, p emPartialPass) error {
	h := emPartial{Run: c.run, Pass: pass, Version: emCkptVersion, Halves: p.halves, Half: p.half}
	if p.warm != nil {
		h.WarmDocs, h.WarmKeys = len(p.warm.done), p.warm.keys
	}
	return writeCheckpoint(c.partial, h, func(w io.Writer) error {
		if p.half == 1 {
			if err := p.first.Encode(w); err != nil {
				return err
			}
		}
		if err := p.run.Encode(w); err != nil || p.warm == nil {
			return err
		}
		return p.warm.write(w, &p.warm.next, func(i int) bool { return p.warm.done[i] })
	})
}

// loadPartial returns the saved statistics of EM pass number pass, run in
// halves or not and with the warm starts warm (nil: none), which it
// restores (their next entries of the documents committed). It returns
// nil when there are none, or only those of another pass or of a pass run
// otherwise (an older streamfit's, which saved no warm starts): they are
// stale, and the pass runs again from its start.
func (c *emCheckpoint) loadPartial(pass int, halves bool, warm *warmStarts) (*emPartialPass, error) {
	var h emPartial
	var p *emPartialPass
	_, err := readCheckpoint(c.partial, &h, func(r io.Reader) error {
		if h.Run != c.run {
			return fmt.Errorf("checkpoint %s is of another fit: %q, this fit %q (use another directory, or remove it to start over)", c.partial, h.Run, c.run)
		}
		if h.Pass != pass || h.Version != emCkptVersion || h.Halves != halves || (h.WarmDocs > 0) != (warm != nil) || h.Half < 0 || h.Half > 1 || h.Half == 1 && !halves {
			return nil
		}
		if warm != nil && (h.WarmDocs != len(warm.done) || h.WarmKeys != warm.keys) {
			return fmt.Errorf("checkpoint %s holds the warm starts of another sample of the documents (%d documents, this fit's %d; remove it to start the pass over)", c.partial, h.WarmDocs, len(warm.done))
		}
		// The EMAcc decoder reads from r itself: readCheckpoint's reader
		// is buffered past bufio's default size, so it reads no further
		// than each encoding's end.
		q := &emPartialPass{halves: halves, half: h.Half, warm: warm}
		var err error
		if h.Half == 1 {
			if q.first, err = DecodeEMAcc(r); err != nil {
				return fmt.Errorf("checkpoint %s: %w (remove it to start the pass over)", c.partial, err)
			}
		}
		if q.run, err = DecodeEMAcc(r); err != nil {
			return fmt.Errorf("checkpoint %s: %w (remove it to start the pass over)", c.partial, err)
		}
		if warm != nil {
			held, err := warm.read(r, &warm.next)
			if err != nil {
				return fmt.Errorf("checkpoint %s: its warm starts do not read back (%v; remove it to start the pass over)", c.partial, err)
			}
			copy(warm.done, held)
		}
		p = q
		return nil
	})
	return p, err
}

// A checkpoint file ends with a trailer: ckptMagic and the CRC-32C of every
// byte before it. A damaged checkpoint (one flipped bit in α or the topics
// gave another model, exit 0) is named and refused before any of it is
// used.
const ckptMagic = "SFck"

var ckptCRC = crc32.MakeTable(crc32.Castagnoli)

// writeCheckpoint writes header as a JSON line, then body, then the
// trailer, to path, atomically.
func writeCheckpoint(path string, header any, body func(io.Writer) error) error {
	f, err := stream.CreateAtomic(path)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	h, err := json.Marshal(header)
	sum := crc32.New(ckptCRC)
	w := bufio.NewWriterSize(io.MultiWriter(f, sum), 1<<16)
	if err == nil {
		w.Write(append(h, '\n'))
		err = body(w)
	}
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		_, err = f.Write(binary.LittleEndian.AppendUint32([]byte(ckptMagic), sum.Sum32()))
	}
	if err != nil {
		f.Abort()
		return fmt.Errorf("checkpoint %s: %w", path, err)
	}
	return f.Commit()
}

// readCheckpoint checks the trailer of a file written by writeCheckpoint,
// reads its JSON line into header and hands the rest to body; it reports
// whether the file exists.
func readCheckpoint(path string, header any, body func(io.Reader) error) (bool, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("checkpoint: %w", err)
	}
	defer f.Close()
	n, err := checkTrailer(f)
	if err != nil {
		return false, fmt.Errorf("checkpoint %s: %w; it is not used (remove it to start over)", path, err)
	}
	r := bufio.NewReaderSize(io.LimitReader(f, n), 1<<16)
	line, err := r.ReadBytes('\n')
	if err == nil {
		err = json.Unmarshal(line, header)
	}
	if err != nil {
		return false, fmt.Errorf("checkpoint %s: not an EM checkpoint: %v (remove it to start over)", path, err)
	}
	if err := body(r); err != nil {
		return false, err
	}
	return true, nil
}

// errCkptDamaged: a checkpoint whose checksum does not match its bytes.
var errCkptDamaged = errors.New("damaged: its bytes do not match its checksum")

// checkTrailer checks the checksum of the checkpoint f and returns the
// length of its content (the bytes before the trailer), leaving f at its
// start.
func checkTrailer(f *os.File) (int64, error) {
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	n := st.Size() - int64(len(ckptMagic)) - 4
	if n < 0 {
		return 0, errCkptDamaged
	}
	sum := crc32.New(ckptCRC)
	if _, err := io.Copy(sum, io.NewSectionReader(f, 0, n)); err != nil {
		return 0, err
	}
	tail := make([]byte, len(ckptMagic)+4)
	if _, err := f.ReadAt(tail, n); err != nil {
		return 0, err
	}
	if string(tail[:len(ckptMagic)]) != ckptMagic {
		return 0, errors.New("no checksum at its end: damaged, or written by an older streamfit")
	}
	if binary.LittleEndian.Uint32(tail[len(ckptMagic):]) != sum.Sum32() {
		return 0, errCkptDamaged
	}
	return n, nil
}
