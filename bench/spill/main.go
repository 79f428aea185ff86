// Command spill measures the spill file of a document source: its size
// against the input's, and the CPU time of a pass over the input, the pass
// that writes the spill, and a pass over the spill.
//
//	go run ./bench/spill --vocab V INPUT...
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"runtime/pprof"
	"time"

	"github.com/streamfit/streamfit/internal/sysinfo"
	"github.com/streamfit/streamfit/stream"
	_ "github.com/streamfit/streamfit/stream/formats"
)

func main() {
	vocab := flag.String("vocab", "", "vocabulary of raw text inputs")
	workers := flag.Int("workers", 0, "decoding goroutines (default: one per CPU)")
	reps := flag.Int("reps", 3, "passes over the spill file to time")
	profile := flag.String("cpuprofile", "", "write a CPU profile of the passes over the spill file to `FILE`")
	flag.Parse()
	if *profile != "" {
		f, err := os.Create(*profile)
		if err != nil {
			log.Fatal(err)
		}
		defer f.Close()
		cpuProfile = f
	}
	for _, path := range flag.Args() {
		if err := measure(path, *vocab, *workers, *reps); err != nil {
			log.Fatal(err)
		}
	}
}

// cpuProfile, when set, receives a CPU profile of the passes over the
// spill file.
var cpuProfile *os.File

// pass reads one pass of src and returns its CPU time and entries.
func pass(src stream.DocSource) (time.Duration, int64, error) {
	c := sysinfo.CPUTime()
	var nnz int64
	for b, err := range src.Docs(context.Background()) {
		if err != nil {
			return 0, 0, err
		}
		nnz += int64(b.NNZ())
		b.Release()
	}
	return sysinfo.CPUTime() - c, nnz, nil
}

func measure(path, vocab string, workers, reps int) error {
	o := stream.Options{VocabPath: vocab, Workers: workers}
	src, err := stream.Open(path, o)
	if err != nil {
		return err
	}
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	plain, nnz, err := pass(src)
	if err != nil {
		return err
	}
	sp := stream.Spill(src, stream.SpillOptions{Workers: workers})
	defer sp.Close()
	write, _, err := pass(sp)
	if err != nil {
		return err
	}
	_, size := sp.Spilled()
	var read time.Duration
	if cpuProfile != nil {
		pprof.StartCPUProfile(cpuProfile)
		defer pprof.StopCPUProfile()
	}
	for range reps {
		d, _, err := pass(sp)
		if err != nil {
			return err
		}
		read += d
	}
	read /= time.Duration(reps)
	fmt.Printf("%s: %d entries; input %.2f MB, spill %.2f MB (%.2f×, %.2f bytes/entry); CPU s per pass: input %.3f, input+spill write %.3f, spill %.3f\n",
		path, nnz, float64(st.Size())/1e6, float64(size)/1e6, float64(size)/float64(st.Size()), float64(size)/float64(nnz),
		plain.Seconds(), write.Seconds(), read.Seconds())
	return nil
}
