//go:build linux

package beamfit

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	fnpb "github.com/apache/beam/sdks/v2/go/pkg/beam/model/fnexecution_v1"
	"google.golang.org/grpc"

	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/stream/synth"
)

// The pipeline on Beam's prism runner as a standalone job server, its SDK
// workers in processes of their own, as Dataflow, Flink and Spark run
// them: the launcher (the streamfit-beam binary) submits the job with
// --runner universal, stages itself as the worker binary, and asks for an
// EXTERNAL environment, a worker pool (workerPool, in the test) that
// starts Beam's container boot program for each worker; boot fetches the
// staged binary from the job server and runs it with --worker.

// bins are the binaries of the job-server tests (binaries).
var bins struct{ prism, boot, beam string }

// binaries builds prism's job server, Beam's boot program (both tools of
// this module's go.mod) and the streamfit-beam command into a directory
// removed when the test ends.
func binaries(t *testing.T) {
	t.Helper()
	dir := t.TempDir()
	// One go build links the three at once.
	pkgs := []string{"github.com/apache/beam/sdks/v2/go/cmd/prism", "github.com/apache/beam/sdks/v2/go/container", "github.com/streamfit/streamfit/cmd/streamfit-beam"}
	out, err := exec.Command("go", append([]string{"build", "-o", dir + string(filepath.Separator)}, pkgs...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("go build %s: %v\n%s", strings.Join(pkgs, " "), err, out)
	}
	bins.prism, bins.boot, bins.beam = filepath.Join(dir, "prism"), filepath.Join(dir, "container"), filepath.Join(dir, "streamfit-beam")
}

// freePort returns a TCP port of 127.0.0.1 that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// workerPool is an EXTERNAL environment's worker pool on loopback: each
// worker the job server asks for is Beam's boot program in a process of
// its own (its own process group), with its semi-persistent directory
// under dir; the processes that ended are kept for their CPU time.
type workerPool struct {
	fnpb.UnimplementedBeamFnExternalWorkerPoolServer
	boot, dir, addr string
	srv             *grpc.Server
	start           time.Time

	mu      sync.Mutex
	running map[string]*exec.Cmd
	atStop  map[int]time.Duration // CPU of a worker's process group when it was stopped, by boot's pid
	ended   []worker
	wg      sync.WaitGroup
}

// worker is an ended worker: boot's process and the CPU time of boot and
// the worker binary it ran.
type worker struct {
	*os.ProcessState
	cpu time.Duration
}

// startPool serves a worker pool on 127.0.0.1 until the test ends.
func startPool(t *testing.T, boot string) *workerPool {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &workerPool{boot: boot, dir: t.TempDir(), addr: l.Addr().String(), srv: grpc.NewServer(), start: time.Now(), running: map[string]*exec.Cmd{}, atStop: map[int]time.Duration{}}
	fnpb.RegisterBeamFnExternalWorkerPoolServer(p.srv, p)
	go p.srv.Serve(l)
	t.Cleanup(func() {
		p.srv.Stop()
		p.mu.Lock()
		for _, c := range p.running {
			syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
		}
		p.mu.Unlock()
		p.wg.Wait()
		p.removeStaged()
	})
	return p
}

// StartWorker starts boot for the worker the job server names.
func (p *workerPool) StartWorker(_ context.Context, req *fnpb.StartWorkerRequest) (*fnpb.StartWorkerResponse, error) {
	id := req.GetWorkerId()
	log, err := os.Create(filepath.Join(p.dir, "worker-"+id+".log"))
	if err != nil {
		return &fnpb.StartWorkerResponse{Error: err.Error()}, nil
	}
	cmd := exec.Command(p.boot, "--id="+id,
		"--control_endpoint="+req.GetControlEndpoint().GetUrl(),
		"--artifact_endpoint="+req.GetArtifactEndpoint().GetUrl(),
		"--provision_endpoint="+req.GetProvisionEndpoint().GetUrl(),
		"--logging_endpoint="+req.GetLoggingEndpoint().GetUrl(),
		"--semi_persist_dir="+p.dir)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.Dir = p.dir // boot writes the pipeline's options to its working directory
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		log.Close()
		return &fnpb.StartWorkerResponse{Error: err.Error()}, nil
	}
	p.mu.Lock()
	p.running[id] = cmd
	p.mu.Unlock()
	p.wg.Go(func() {
		cmd.Wait() // when boot reaps the worker, its CPU time counts the worker's
		log.Close()
		p.mu.Lock()
		delete(p.running, id)
		ps := cmd.ProcessState
		p.ended = append(p.ended, worker{ps, max(ps.UserTime()+ps.SystemTime(), p.atStop[ps.Pid()])})
		p.mu.Unlock()
	})
	return &fnpb.StartWorkerResponse{}, nil
}

// StopWorker lets the worker end by itself (it does once the job server
// closes its control stream), and ends its process group if it has not
// after 20 s.
func (p *workerPool) StopWorker(_ context.Context, req *fnpb.StopWorkerRequest) (*fnpb.StopWorkerResponse, error) {
	p.mu.Lock()
	cmd := p.running[req.GetWorkerId()]
	p.mu.Unlock()
	if cmd != nil {
		// The worker binary is boot's child: its CPU time counts in boot's
		// only if boot reaps it, which a kill prevents, so it is read now.
		c := groupCPU(cmd.Process.Pid)
		p.mu.Lock()
		p.atStop[cmd.Process.Pid] = c
		p.mu.Unlock()
		time.AfterFunc(20*time.Second, func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	}
	return &fnpb.StopWorkerResponse{}, nil
}

// wait waits until n workers have ended (at most a minute), and returns
// their processes.
func (p *workerPool) wait(t *testing.T, n int) []worker {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		p.mu.Lock()
		ended := append([]worker(nil), p.ended...)
		p.mu.Unlock()
		if len(ended) >= n {
			return ended
		}
	}
	t.Fatalf("fewer than %d workers ended", n)
	return nil
}

// logs returns the end of the workers' logs.
func (p *workerPool) logs() string {
	var b strings.Builder
	files, _ := filepath.Glob(filepath.Join(p.dir, "worker-*.log"))
	for _, f := range files {
		data, _ := os.ReadFile(f)
		fmt.Fprintf(&b, "--- %s:\n%s\n", filepath.Base(f), data[max(0, len(data)-4000):])
	}
	return b.String()
}

// removeStaged removes the copies of the worker binary that boot leaves in
// /tmp/binNNN (a directory it makes for each worker, outside the
// semi-persistent directory).
func (p *workerPool) removeStaged() {
	dirs, _ := filepath.Glob("/tmp/bin*")
	for _, d := range dirs {
		entries, err := os.ReadDir(d)
		fi, serr := os.Stat(d)
		if err == nil && serr == nil && len(entries) == 1 && entries[0].Name() == "worker" && !fi.ModTime().Before(p.start) {
			os.RemoveAll(d)
		}
	}
}

// jobServer is prism's job server in a process of its own, on loopback.
type jobServer struct {
	cmd      *exec.Cmd
	endpoint string
	log      string
}

// startJobServer starts prism's job server until the test ends.
func startJobServer(t *testing.T) *jobServer {
	t.Helper()
	port := freePort(t)
	j := &jobServer{endpoint: fmt.Sprintf("127.0.0.1:%d", port), log: filepath.Join(t.TempDir(), "prism.log")}
	log, err := os.Create(j.log)
	if err != nil {
		t.Fatal(err)
	}
	j.cmd = exec.Command(bins.prism, fmt.Sprintf("--job_port=%d", port), "--serve_http=false", "--log_level=warn")
	j.cmd.Stdout, j.cmd.Stderr = log, log
	if err := j.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		j.cmd.Process.Kill()
		j.cmd.Wait()
		log.Close()
	})
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if c, err := net.Dial("tcp", j.endpoint); err == nil {
			c.Close()
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("prism's job server did not listen on %s", j.endpoint)
		}
	}
}

// submitTimeout bounds a job of the tests (the scale measurement's too).
const submitTimeout = 30 * time.Minute

// submit runs the launcher: the pipeline of args on the job server, its
// workers from the pool, ended after submitTimeout. It returns the
// launcher's process.
func submit(t *testing.T, j *jobServer, pool *workerPool, args ...string) *os.ProcessState {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), submitTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bins.beam, append([]string{"--runner", "universal", "--endpoint", j.endpoint,
		"--environment_type", "EXTERNAL", "--environment_config", pool.addr, "--worker_binary", bins.beam}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		prism, _ := os.ReadFile(j.log)
		t.Fatalf("streamfit-beam %s: %v\n%s\nprism:\n%s\nworkers:\n%s", strings.Join(args, " "), err, out, prism, pool.logs())
	}
	return cmd.ProcessState
}

// TestJobServer runs the default LDA fit (EM passes included) and a GMM on
// prism's job server in another process, with the workers in processes
// the job server asks an EXTERNAL worker pool for, and checks that each
// model is byte-identical to `streamfit fit`'s over one file of the same
// rows: the pipeline's DoFns, coders, side inputs and combiner state
// survive being shipped to a worker that is not the launcher.
func TestJobServer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the job server and boot, and runs two jobs (about a minute)")
	}
	binaries(t)
	j := startJobServer(t)
	pool := startPool(t, bins.boot)
	dir := t.TempDir()
	read := []string{"--batch-rows", fmt.Sprint(readRows), "--workers", "2", "--no-timing"}

	lda := corpus(t, dir, synth.LDAConfig{Docs: 3000, Vocab: 300, K: 5, Alpha0: 1, DocLen: 30, Seed: 9}, 250, parquetParts(750, 500, 1000, 750))
	flags := []string{"--k", "5", "--alpha0", "1", "--seed", "3"}
	got := filepath.Join(dir, "lda.json")
	submit(t, j, pool, append(append(append(append([]string{}, read...), flags...), "--out", got), lda...)...)
	want := filepath.Join(dir, "lda-fit.json")
	run(t, append(append([]string{"fit", "lda", "--input", filepath.Join(dir, "all.parquet"), "--progress", "off", "--out", want}, read...), flags...)...)
	if !bytes.Equal(readFile(t, got), readFile(t, want)) {
		t.Errorf("LDA on the job server differs from streamfit fit on the union: %.3g relative", modelDiff(t, got, want))
	}
	m, err := models.Read(got)
	if err != nil {
		t.Fatal(err)
	}
	if m.Fit.EM == nil || m.Fit.EM.Passes < 2 {
		t.Errorf("EM record %+v: want the EM passes", m.Fit.EM)
	}
	workers := pool.wait(t, 1)

	gdir := t.TempDir()
	gmm := gmmData(t, gdir, synth.GMMConfig{D: 6, K: 3, Seed: 7}, 4, 600, 200)
	flags = []string{"--k", "3", "--seed", "5"}
	got = filepath.Join(gdir, "gmm.json")
	submit(t, j, pool, append(append(append(append([]string{"--model", "gmm"}, read...), flags...), "--out", got), gmm...)...)
	want = filepath.Join(gdir, "gmm-fit.json")
	run(t, append(append([]string{"fit", "gmm", "--input", filepath.Join(gdir, "all.parquet"), "--progress", "off", "--out", want}, read...), flags...)...)
	if !bytes.Equal(readFile(t, got), readFile(t, want)) {
		t.Errorf("GMM on the job server differs from streamfit fit gmm on the union:\n%s\n%s", readFile(t, got), readFile(t, want))
	}
	workers = pool.wait(t, len(workers)+1)
	for _, w := range workers {
		if w.Pid() == os.Getpid() {
			t.Errorf("a worker ran in the test's process")
		}
		t.Logf("worker process %d: %v CPU", w.Pid(), w.cpu)
	}
}

// groupCPU is the user+sys time so far of the processes of the process
// group pgid (from /proc).
func groupCPU(pgid int) time.Duration {
	var ticks int64
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, f := range stats {
		b, err := os.ReadFile(f)
		i := bytes.LastIndexByte(b, ')')
		if err != nil || i < 0 || i+2 > len(b) {
			continue
		}
		fs := strings.Fields(string(b[i+2:])) // fields 3… of stat(5)
		if len(fs) < 13 || fs[2] != strconv.Itoa(pgid) {
			continue
		}
		u, _ := strconv.ParseInt(fs[11], 10, 64)
		s, _ := strconv.ParseInt(fs[12], 10, 64)
		ticks += u + s
	}
	return time.Duration(ticks) * time.Second / 100 // USER_HZ
}
