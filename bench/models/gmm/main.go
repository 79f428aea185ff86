// Command gmm measures how well models/gmm recovers a spherical Gaussian
// mixture as the sample grows (docs/MATH.md §2.2, §5; issue 5), and runs
// scikit-learn's GaussianMixture (EM with spherical covariances, k-means
// initialisation) on the same data in the same run when python3 can import
// sklearn (Debian: apt-get install python3-sklearn); otherwise it says so and
// prints only its own columns.
//
// For every n and seed it draws a mixture (synth.NewGMM: k components in d
// dimensions, common σ² = 1, means of norm -sep), holds the rows in memory, and
// times both fits on them (the moment fit makes two passes over the rows in
// memory; EM runs to its default tolerance). Errors are those of models/gmm
// Eval after relabelling: relative spectral error of the mean matrix, ℓ1 of
// the weights, largest relative variance error.
//
//	go run ./bench/models/gmm -ns 1000,10000,100000,1000000 -seeds 3
package main

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/streamfit/streamfit/models/gmm"
	"github.com/streamfit/streamfit/stream"
	"github.com/streamfit/streamfit/stream/synth"
)

//go:embed gmm_em.py
var sklearnScript []byte

type row struct {
	n                int64
	seed             uint64
	ours, em         *gmm.Metrics
	oursSecs, emSecs float64
	emIters          int
	emConverged      bool
}

func main() {
	ns := flag.String("ns", "1000,10000,100000,1000000", "sample sizes, comma-separated")
	seeds := flag.Int("seeds", 3, "seeds per sample size (1..seeds)")
	d := flag.Int("d", 20, "dimension")
	k := flag.Int("k", 5, "components")
	sep := flag.Float64("sep", 4, "norm of every component mean (σ = 1)")
	python := flag.String("python", "", "python interpreter with scikit-learn (default: python3, then /usr/bin/python3)")
	workers := flag.Int("workers", runtime.GOMAXPROCS(0), "goroutines of the moment fit")
	flag.Parse()
	py := findSklearn(*python)
	if py == "" {
		fmt.Println("scikit-learn not found (no python3 that can `import sklearn`; Debian: apt-get install python3-sklearn): EM columns skipped.")
		fmt.Println()
	}
	dir, err := os.MkdirTemp("", "gmm-bench")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	script := filepath.Join(dir, "gmm_em.py")
	if err := os.WriteFile(script, sklearnScript, 0o644); err != nil {
		log.Fatal(err)
	}
	var rows []row
	fmt.Printf("d=%d, k=%d, σ²=1, mean norm %g\n\n", *d, *k, *sep)
	fmt.Println("| n | seed | moments: means rel err | weights ℓ1 | var rel err | seconds | EM: means rel err | weights ℓ1 | var rel err | seconds | EM iters |")
	fmt.Println("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, f := range strings.Split(*ns, ",") {
		n, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
		if err != nil {
			log.Fatalf("-ns: %v", err)
		}
		for s := 1; s <= *seeds; s++ {
			r := run(n, uint64(s), *d, *k, *sep, *workers, py, script, dir)
			rows = append(rows, r)
			em := "| – | – | – | – | – |"
			if r.em != nil {
				conv := ""
				if !r.emConverged {
					conv = " (not converged)"
				}
				em = fmt.Sprintf("| %.4f | %.4f | %.4f | %.3f | %d%s |", r.em.Means, r.em.Weights, r.em.Variances, r.emSecs, r.emIters, conv)
			}
			fmt.Printf("| %d | %d | %.4f | %.4f | %.4f | %.3f %s\n", n, s, r.ours.Means, r.ours.Weights, r.ours.Variances, r.oursSecs, em)
		}
	}
	summary(rows)
}

// run draws one data set and fits both methods on it.
func run(n int64, seed uint64, d, k int, sep float64, workers int, py, script, dir string) row {
	ctx := context.Background()
	g, err := synth.NewGMM(synth.GMMConfig{Rows: n, D: d, K: k, Sep: sep, Seed: seed})
	if err != nil {
		log.Fatal(err)
	}
	all, err := stream.CollectDense(ctx, g)
	if err != nil {
		log.Fatal(err)
	}
	truth := gmm.TruthOf(g)
	r := row{n: n, seed: seed}
	start := time.Now()
	m, err := gmm.Fit(ctx, &stream.MemoryDense{All: all}, gmm.Config{K: k, Seed: seed, Workers: workers})
	if err != nil {
		log.Fatal(err)
	}
	r.oursSecs = time.Since(start).Seconds()
	if r.ours, err = gmm.Eval(m, truth); err != nil {
		log.Fatal(err)
	}
	if py == "" {
		return r
	}
	data := filepath.Join(dir, "x.f64")
	var buf bytes.Buffer
	if err := binary.Write(&buf, binary.LittleEndian, all.Data[:all.Rows*all.Cols]); err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(data, buf.Bytes(), 0o644); err != nil {
		log.Fatal(err)
	}
	buf.Reset()
	out, err := exec.Command(py, script, data, fmt.Sprint(n), fmt.Sprint(d), fmt.Sprint(k), fmt.Sprint(seed)).Output()
	os.Remove(data)
	if err != nil {
		log.Fatalf("sklearn: %v", err)
	}
	var em struct {
		gmm.Model
		Seconds   float64 `json:"seconds"`
		Iters     int     `json:"iters"`
		Converged bool    `json:"converged"`
	}
	if err := json.Unmarshal(out, &em); err != nil {
		log.Fatalf("sklearn output: %v", err)
	}
	r.emSecs, r.emIters, r.emConverged = em.Seconds, em.Iters, em.Converged
	if r.em, err = gmm.Eval(&em.Model, truth); err != nil {
		log.Fatal(err)
	}
	return r
}

// findSklearn returns a python interpreter that imports sklearn, or "".
func findSklearn(want string) string {
	cands := []string{"python3", "/usr/bin/python3"}
	if want != "" {
		cands = []string{want}
	}
	for _, c := range cands {
		if exec.Command(c, "-c", "import sklearn").Run() == nil {
			return c
		}
	}
	return ""
}

// summary prints the mean over seeds per n.
func summary(rows []row) {
	fmt.Println("\nMean over seeds:")
	fmt.Println()
	fmt.Println("| n | moments: means rel err | var rel err | seconds | EM: means rel err | var rel err | seconds |")
	fmt.Println("|---:|---:|---:|---:|---:|---:|---:|")
	for i := 0; i < len(rows); {
		j := i
		var a [6]float64
		for ; j < len(rows) && rows[j].n == rows[i].n; j++ {
			r := rows[j]
			a[0] += r.ours.Means
			a[1] += r.ours.Variances
			a[2] += r.oursSecs
			if r.em != nil {
				a[3] += r.em.Means
				a[4] += r.em.Variances
				a[5] += r.emSecs
			} else {
				a[3] = math.NaN()
			}
		}
		c := float64(j - i)
		em := "– | – | – |"
		if !math.IsNaN(a[3]) {
			em = fmt.Sprintf("%.4f | %.4f | %.3f |", a[3]/c, a[4]/c, a[5]/c)
		}
		fmt.Printf("| %d | %.4f | %.4f | %.3f | %s\n", rows[i].n, a[0]/c, a[1]/c, a[2]/c, em)
		i = j
	}
}
