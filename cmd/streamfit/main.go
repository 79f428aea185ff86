// Command streamfit learns latent variable models by the method of moments from
// data on disk: it generates, inspects and converts corpora and sample tables,
// fits models in a few passes over the data, and evaluates them against known truth.
//
// Run `streamfit help` for the list of commands and `streamfit CMD -h` for the
// flags of one.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/streamfit/streamfit/models"
	_ "github.com/streamfit/streamfit/models/all"
	"github.com/streamfit/streamfit/stream"
)

// command is one subcommand: its one-line summary and its entry point, which
// gets the arguments after the command name.
type command struct {
	summary string
	run     func(ctx context.Context, e *env, args []string) error
}

// commands are the subcommands by name; fit, stats, gen and the others
// that serve every model find the models in the registry (models/all).
func commands() map[string]command {
	return map[string]command{
		"convert": {"convert between docword, Parquet and Arrow IPC; raw text to bag of words", runConvert},
		"demo":    {"generate an LDA corpus, fit it and score the fit against the truth", runDemo},
		"eval":    {"score a fitted model: against the truth it was generated from, on held-out documents, or by topic coherence", runEval},
		"fit":     {"fit a model by the method of moments: fit " + strings.Join(models.Names(nil), "|"), runFit},
		"gen":     {"generate data with known truth: gen " + strings.Join(generatorNames(), "|"), runGen},
		"infer":   {"document topics: each document's topic shares under a fitted topic model, as Parquet", runInfer},
		"inspect": {"describe a data file: format, schema, rows, vocabulary, nnz, lengths", runInspect},
		"merge":   {"add shard statistics of the same fit phase into one file", runMerge},
		"report":  {"write a self-contained HTML page showing a fitted model", runReport},
		"stats":   {"compute one shard's mergeable statistics of a fit phase: stats " + strings.Join(models.Names(nil), "|"), runStats},
		"topics":  {"print the top words of each topic of a fitted topic model", runTopics},
		"vocab":   {"build a vocabulary from raw text, or show one: vocab build|show", runVocab},
		"version": {"print streamfit's version, the commit it was built from and the Go release", runVersion},
	}
}

// env is what a command runs with: where its results (stdout) and its
// progress, warnings and summaries (stderr) go.
type env struct {
	stdout, stderr io.Writer
}

// printf writes a line of progress or a summary on stderr.
func (e *env) printf(format string, args ...any) { fmt.Fprintf(e.stderr, format, args...) }

// warn prints a warning of the library on stderr, with the flags of the
// settings it names.
func (e *env) warn(cmd, w string) {
	e.printf("streamfit %s: warning: %s%s\n", cmd, w, settingHint(w))
}

// terminal reports whether stderr is a terminal (progress is then drawn
// in place).
func (e *env) terminal() bool {
	f, ok := e.stderr.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// usageError marks errors in how the command was called (exit status 2).
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The first signal cancels the work (outputs are removed, checkpoints
	// kept); a second one kills the process the default way, should some
	// loop not be watching the context.
	go func() { <-ctx.Done(); stop() }()
	os.Exit(run(ctx, os.Args[1:], os.Stderr))
}

func run(ctx context.Context, args []string, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(stderr)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	if args[0] == "--version" || args[0] == "-version" {
		args[0] = "version"
	}
	c, ok := commands()[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "streamfit: unknown command %q\n\n", args[0])
		usage(stderr)
		return 2
	}
	err := c.run(ctx, &env{stdout: os.Stdout, stderr: stderr}, args[1:])
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, new(usageError)):
		fmt.Fprintf(stderr, "streamfit %s: %v\n", args[0], err)
		return 2
	default:
		fmt.Fprintf(stderr, "streamfit %s: %v%s\n", args[0], err, flagHint(err))
		return 1
	}
}

// flagHint names the flag that answers a data error the library reports
// without knowing the command line, and the flags of the settings its
// message names (settingFlags).
func flagHint(err error) string {
	switch {
	case errors.Is(err, stream.ErrFormat):
		return " (--format names it)"
	case errors.Is(err, stream.ErrNeedVocab):
		return " (--vocab names it; `streamfit vocab build` makes one)"
	}
	return settingHint(err.Error())
}

// settingFlags pairs the names library messages give their settings (the
// fields of the models' Config and of stream.Options) with the flags that
// set them.
var settingFlags = []struct{ name, flag string }{
	{"PowerIters", "--power-iters"},
	{"SketchLen", "--sketch-len"},
	{"SketchCount", "--sketch-count"},
	{"Third", "--plan"},
	{"ExactDim", "--exact-dim"},
	{"Iters", "--iters"},
	{"Solver", "--solver"},
	{"Rotate", "--rotate"},
	{"Views", "--views"},
	{"stream.Options.VocabPath", "--vocab"},
}

// settingHint returns " (PowerIters is --power-iters; …)" for the settings
// msg names as whole words, or "" when it names none.
func settingHint(msg string) string {
	var named []string
	for _, s := range settingFlags {
		if containsWord(msg, s.name) {
			named = append(named, s.name+" is "+s.flag)
		}
	}
	if len(named) == 0 {
		return ""
	}
	return " (" + strings.Join(named, "; ") + ")"
}

// containsWord reports whether w occurs in s with no letter, digit or
// underscore either side.
func containsWord(s, w string) bool {
	word := func(b byte) bool {
		return b == '_' || '0' <= b && b <= '9' || 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z'
	}
	for i := 0; ; {
		j := strings.Index(s[i:], w)
		if j < 0 {
			return false
		}
		j += i
		end := j + len(w)
		if (j == 0 || !word(s[j-1])) && (end == len(s) || !word(s[end])) {
			return true
		}
		i = j + 1
	}
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: streamfit COMMAND [flags] [args]\n\ncommands:")
	cmds := commands()
	for _, n := range slices.Sorted(maps.Keys(cmds)) {
		fmt.Fprintf(w, "  %-9s %s\n", n, cmds[n].summary)
	}
	fmt.Fprintln(w, "\nRun `streamfit COMMAND -h` for the flags of a command.")
}

// newFlags makes a flag set that reports errors instead of exiting, with a usage
// line naming the command's arguments.
func newFlags(name, args, about string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	setAbout(fs, args, about)
	return fs
}

// setAbout sets the help fs prints: its usage line with args, about, and
// its flags.
func setAbout(fs *flag.FlagSet, args, about string) {
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: streamfit %s [flags] %s\n\n%s\n\nflags:\n", fs.Name(), args, about)
		fs.PrintDefaults()
	}
}

// forceOutputs is set by --force, which every command takes: outputs that
// exist read-only are replaced all the same (checkOutputs).
var forceOutputs bool

// takeForce removes --force (before any "--") from args and reports
// whether it was there.
func takeForce(args []string) ([]string, bool) {
	var out []string
	force := false
	for i, a := range args {
		if a == "--" {
			return append(out, args[i:]...), force
		}
		if a == "--force" || a == "-force" {
			force = true
			continue
		}
		out = append(out, a)
	}
	return out, force
}

// parse parses flags that may come before or after the positional arguments
// (`streamfit inspect FILE --json` works), returning the positional ones.
// The flag set's help and errors go to stderr. --force, which every command
// takes, is read here.
func (e *env) parse(fs *flag.FlagSet, args []string) ([]string, error) {
	fs.SetOutput(e.stderr)
	args, forceOutputs = takeForce(args)
	if err := unknownFlag(fs, args); err != nil {
		return nil, err
	}
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, usageError{err.Error()}
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, checkValues(fs)
		}
		if args[0] == "--" {
			return append(pos, args[1:]...), checkValues(fs)
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// intMin is the least value a numeric flag of this name accepts when given
// on the command line, in every command that has it (a flag's default may
// be a sentinel below it, such as --restarts 0 for the solver's default).
var intMin = map[string]int64{
	"workers": 0, "batch-rows": 1, "batch-entries": -1, "iters": 1, "restarts": 1, "oversample": 0, "power-iters": -1,
	"exact-dim": -1, "row-group": 0, "docs": 1, "top": 1, "k": 1, "max-size": 0,
	"sketch-count": 0, "rows": 1, "sets": 1, "per-set": 1, "seqs": 1, "len": 1, "d": 1, "min-count": 0,
	"min-df": 0, "als-sweeps": 0, "em-passes": 0, "em-minibatch": 1,
}

// positiveFloat names the float flags that must be finite and > 0 when
// given (0 is not a way to ask for the default).
var positiveFloat = map[string]bool{"alpha0": true, "beta": true, "doc-len": true, "em-tol": true, "alpha": true}

// fraction names the float flags that are a fraction: in (0, 1] when given.
var fraction = map[string]bool{"max-df": true}

// checkValues refuses, as usage errors, numeric flags given on the command
// line outside what they mean: a negative count, a zero batch, a NaN.
func checkValues(fs *flag.FlagSet) error {
	var err error
	fs.Visit(func(f *flag.Flag) {
		g, ok := f.Value.(flag.Getter)
		if err != nil || !ok {
			return
		}
		var v int64
		switch x := g.Get().(type) {
		case int:
			v = int64(x)
		case int64:
			v = x
		case float64:
			if positiveFloat[f.Name] && (!(x > 0) || math.IsInf(x, 1)) {
				err = usagef("--%s=%s: want a finite number > 0", f.Name, f.Value)
			}
			if fraction[f.Name] && !(x > 0 && x <= 1) {
				err = usagef("--%s=%s: want a fraction in (0, 1]", f.Name, f.Value)
			}
			return
		case time.Duration:
			if x < 0 {
				err = usagef("--%s=%s: a duration cannot be negative", f.Name, f.Value)
			}
			return
		default:
			return
		}
		if m, ok := intMin[f.Name]; ok && v < m {
			err = usagef("--%s=%d: must be at least %d", f.Name, v, m)
		}
	})
	return err
}

// oneOf reports whether s is one of the allowed values, for flag checks.
func oneOf(s string, allowed ...string) error {
	for _, a := range allowed {
		if s == a {
			return nil
		}
	}
	return usagef("%q is not one of %s", s, strings.Join(allowed, ", "))
}

// checkOutputs refuses, before any work, an output that is one of the inputs
// or that another output also names (usage errors), and reports an output that
// cannot be created (a missing directory, a directory, no permission) or that
// exists read-only for this user (unless --force). Empty names (flags not
// given) are skipped.
func checkOutputs(inputs []string, outputs ...string) error {
	var outs []string
	for _, o := range outputs {
		if o != "" {
			outs = append(outs, o)
		}
	}
	if err := stream.CheckOutputs(inputs, outs); err != nil {
		return usageError{err.Error()}
	}
	for _, o := range outs {
		if err := stream.CheckWritable(o); err != nil {
			return err
		}
		if !forceOutputs {
			// Replaced by a rename, which the directory allows: refuse a
			// read-only file as cp does.
			if err := stream.CheckReplaceable(o); err != nil {
				return err
			}
		}
	}
	return nil
}
