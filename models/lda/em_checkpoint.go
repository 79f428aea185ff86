package lda

import (
	"bufio"
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
// word-major (d·k float64), little endian, bit for bit. The passes that
// follow a resumed one are those of an uninterrupted fit, so the model is
// the same. The pass cap is not part of the settings a checkpoint must
// share: a refinement resumed with a higher cap continues. Within a pass,
// at most once every Checkpoint.Every, the pass's statistics so far are
// saved as em.partial (a JSON line {run, pass}, then EMAcc.Encode),
// and a resumed pass continues after the batches they hold.
type emCheckpoint struct {
	path, partial string
	run           string
	every         time.Duration
}

// emPartial is the first line of em.partial.
type emPartial struct {
	Run  string `json:"run"`
	Pass int    `json:"pass"`
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
	SamplePasses int       `json:"sample_passes,omitempty"`
	SampleDone   bool      `json:"sample_done,omitempty"`
	HeldOut      []float64 `json:"held_out,omitempty"`
	Undone       bool      `json:"undone,omitempty"`
	Prev         bool      `json:"prev,omitempty"`
	Gain         *float64  `json:"gain,omitempty"`
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

// save writes the state after a pass.
func (c *emCheckpoint) save(st *emState) error {
	p := &st.params
	h := emHeader{Run: c.run, K: p.K, D: p.D, Bounds: st.bounds, Done: st.done, SamplePasses: st.samplePasses, SampleDone: st.sampleDone,
		HeldOut: st.heldOut, Undone: st.undone, Prev: st.prevBeta != nil}
	if !math.IsNaN(st.gain) {
		h.Gain = &st.gain
	}
	if err := writeCheckpoint(c.path, h, func(w io.Writer) error {
		if h.Prev {
			return writeFloats(w, p.Alpha, p.Beta, st.prevAlpha, st.prevBeta)
		}
		return writeFloats(w, p.Alpha, p.Beta)
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
		return nil
	})
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

// savePartial saves the statistics of EM pass number pass (counted from 1)
// so far.
func (c *emCheckpoint) savePartial(pass int, acc *EMAcc) error {
	return writeCheckpoint(c.partial, emPartial{Run: c.run, Pass: pass}, acc.Encode)
}

// loadPartial returns the saved statistics of EM pass number pass (nil
// when there are none, or only those of another pass, which are stale).
func (c *emCheckpoint) loadPartial(pass int) (*EMAcc, error) {
	var h emPartial
	var acc *EMAcc
	_, err := readCheckpoint(c.partial, &h, func(r io.Reader) error {
		if h.Run != c.run {
			return fmt.Errorf("checkpoint %s is of another fit: %q, this fit %q (use another directory, or remove it to start over)", c.partial, h.Run, c.run)
		}
		if h.Pass != pass {
			return nil
		}
		var err error
		if acc, err = DecodeEMAcc(r); err != nil {
			return fmt.Errorf("checkpoint %s: %w (remove it to start the pass over)", c.partial, err)
		}
		return nil
	})
	return acc, err
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
