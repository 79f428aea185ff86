package lda

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// jobEnv carries a Job (as JSON) to a child process.
const jobEnv = "STREAMFIT_LDA_JOB"

// TestMain runs a single Job and exits when started as a child by runChild.
func TestMain(m *testing.M) {
	if spec := os.Getenv(jobEnv); spec != "" {
		os.Exit(child(spec))
	}
	os.Exit(m.Run())
}

func child(spec string) int {
	var j Job
	if err := json.Unmarshal([]byte(spec), &j); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	res, err := j.Run(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	b, _ := json.Marshal(res)
	fmt.Printf("RESULT %s\n", b)
	return 0
}

// runChild runs j in a fresh process (this test binary) and returns its
// result; extraEnv adds environment variables (e.g. GOGC) to the child's.
func runChild(t testing.TB, j Job, extraEnv ...string) *Result {
	t.Helper()
	spec, err := json.Marshal(j)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$", "-test.bench=^$")
	cmd.Env = append(append(os.Environ(), jobEnv+"="+string(spec)), extraEnv...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child %s %s: %v\n%s", j.Kind, j.Data, err, stderr.String())
	}
	for _, line := range strings.Split(string(out), "\n") {
		if rest, ok := strings.CutPrefix(line, "RESULT "); ok {
			var r Result
			if err := json.Unmarshal([]byte(rest), &r); err != nil {
				t.Fatal(err)
			}
			return &r
		}
	}
	t.Fatalf("child %s %s printed no result:\n%s%s", j.Kind, j.Data, out, stderr.String())
	return nil
}
