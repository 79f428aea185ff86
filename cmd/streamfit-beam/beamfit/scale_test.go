//go:build linux

package beamfit

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/stream"
)

// TestJobServerScale measures the default LDA fit of the corpora named by
// STREAMFIT_BEAM_SCALE (comma-separated Parquet files, e.g. from
// `streamfit gen lda --docs 1000000`; the test is skipped without it):
// `streamfit fit --em-sample -1` in one process (every EM pass over every
// document, as the pipeline's), and the pipeline on prism's job server
// with its worker in a process of its own (TestJobServer's setup), and on
// prism in the launcher (loopback). CPU time is user+sys of every process
// involved (the job server's, read from /proc, the workers' with their
// boot, the launcher's), wall time the launcher's; the models must be
// byte-identical. STREAMFIT_BEAM_SCALE_FLAGS adds fit flags (default
// "--k 20 --alpha0 1 --seed 1").
func TestJobServerScale(t *testing.T) {
	env := os.Getenv("STREAMFIT_BEAM_SCALE")
	if env == "" {
		t.Skip("set STREAMFIT_BEAM_SCALE to Parquet corpora to measure")
	}
	flags := strings.Fields(os.Getenv("STREAMFIT_BEAM_SCALE_FLAGS"))
	if len(flags) == 0 {
		flags = []string{"--k", "20", "--alpha0", "1", "--seed", "1"}
	}
	flags = append(flags, "--no-timing")
	binaries(t)
	j := startJobServer(t)
	pool := startPool(t, bins.boot)
	for _, corpus := range strings.Split(env, ",") {
		units, err := Plan(context.Background(), []string{corpus}, stream.Options{})
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		fitOut := filepath.Join(dir, "fit.json")
		start := time.Now()
		// Every EM pass over every document, as the pipeline's (fit's
		// default runs the first ones on a sample of a large corpus).
		cmd := exec.Command(cli(t), append([]string{"fit", "lda", "--input", corpus, "--em-sample", "-1", "--progress", "off", "--out", fitOut}, flags...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("streamfit fit: %v\n%s", err, out)
		}
		fitWall, fitCPU := time.Since(start), cpu(cmd.ProcessState)
		m, err := models.Read(fitOut)
		if err != nil {
			t.Fatal(err)
		}
		passes := 2 + m.Fit.EM.Passes // the spectral passes (no power pass at these settings) and EM's
		t.Logf("%s: %d documents, %d work units, %d passes reading the documents (2 spectral + %d EM)", corpus, m.Fit.Docs, len(units), passes, m.Fit.EM.Passes)
		t.Logf("| run | wall | CPU (user+sys) | CPU / fit's | extra CPU per pass | per unit and pass |")
		t.Logf("| `streamfit fit lda --em-sample -1` (one process) | %.1f s | %.1f s | 1 | | |", fitWall.Seconds(), fitCPU.Seconds())
		row := func(name string, wall, c time.Duration) {
			extra := (c - fitCPU).Seconds()
			t.Logf("| %s | %.1f s | %.1f s | %.2f | %.2f s | %.0f ms |", name, wall.Seconds(), c.Seconds(), c.Seconds()/fitCPU.Seconds(), extra/float64(passes), 1000*extra/float64(passes*len(units)))
		}

		// The job server, its worker in a process of its own.
		out := filepath.Join(dir, "js.json")
		ended := len(pool.wait(t, 0))
		before := procCPU(t, j.cmd.Process.Pid)
		start = time.Now()
		launcher := submit(t, j, pool, append(append([]string{}, flags...), "--out", out, corpus)...)
		wall := time.Since(start)
		workers := pool.wait(t, ended+1)[ended:]
		server := procCPU(t, j.cmd.Process.Pid) - before
		var worker time.Duration
		for _, w := range workers {
			worker += w.cpu
		}
		row(fmt.Sprintf("job server + %d worker process", len(workers)), wall, cpu(launcher)+server+worker)
		t.Logf("CPU of the launcher %.1f s, the job server %.1f s, the worker (with boot) %.1f s", cpu(launcher).Seconds(), server.Seconds(), worker.Seconds())
		same(t, out, fitOut)

		// Prism in the launcher.
		out = filepath.Join(dir, "loopback.json")
		start = time.Now()
		cmd = exec.Command(bins.beam, append(append([]string{}, flags...), "--out", out, corpus)...)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("streamfit-beam: %v\n%s", err, b)
		}
		row("prism in the launcher (loopback)", time.Since(start), cpu(cmd.ProcessState))
		same(t, out, fitOut)
	}
}

// cpu is the user+sys time of an ended process (and of the children it
// waited for).
func cpu(p *os.ProcessState) time.Duration { return p.UserTime() + p.SystemTime() }

// procCPU is the user+sys time of a running process so far.
func procCPU(t *testing.T, pid int) time.Duration {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64) // fields 14 and 15 of stat(5), in clock ticks
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * time.Second / 100 // USER_HZ
}

// same fails the test unless the model files a and b hold the same bytes.
func same(t *testing.T, a, b string) {
	t.Helper()
	if !bytes.Equal(readFile(t, a), readFile(t, b)) {
		t.Errorf("%s differs from streamfit fit's model", a)
	}
}
