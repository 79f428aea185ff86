package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/streamfit/streamfit/models/lda"
	"github.com/streamfit/streamfit/models/shard"
	"github.com/streamfit/streamfit/stream"
)

// checkpointFlags are the flags of `fit lda|topic` that save and resume its
// passes (lda.Checkpoint).
type checkpointFlags struct {
	dir   *string
	every *time.Duration
}

func addCheckpointFlags(fs *flag.FlagSet) checkpointFlags {
	return checkpointFlags{
		dir: fs.String("checkpoint", "", "lda/topic: save the statistics of every pass to this directory while it runs and when it ends; "+
			"the same command run again after an interruption (even kill -9) resumes from them and writes the same model.json (with --no-timing). "+
			"Checkpoints of another input or other settings are refused"),
		every: fs.Duration("checkpoint-every", lda.DefaultCheckpointEvery, "lda/topic with --checkpoint: time between checkpoints within a pass (0: after every batch)"),
	}
}

// checkpoint returns the checkpoint settings c give a fit of input read with o:
// the key names the input by absolute path, size and modification time, and
// the batch size (a resumed pass skips the batches its checkpoint holds).
func (e *env) checkpoint(c checkpointFlags, input string, o stream.Options) (lda.Checkpoint, error) {
	if c.dir == nil || *c.dir == "" {
		return lda.Checkpoint{}, nil
	}
	abs, err := filepath.Abs(input)
	if err != nil {
		return lda.Checkpoint{}, err
	}
	st, err := os.Stat(input)
	if err != nil {
		return lda.Checkpoint{}, err
	}
	o = o.WithDefaults()
	every := *c.every
	if every <= 0 {
		every = -1
	}
	held, _ := filepath.Glob(filepath.Join(*c.dir, "pass-*.stats"))
	for _, em := range []string{"em.ckpt", "em.partial"} { // the EM passes' (lda.EM)
		if _, err := os.Stat(filepath.Join(*c.dir, em)); err == nil {
			held = append(held, em)
		}
	}
	if len(held) > 0 {
		for i, h := range held {
			held[i] = filepath.Base(h)
		}
		e.printf("fit: resuming from the checkpoints in %s (%s)\n", *c.dir, strings.Join(held, ", "))
	}
	// The batches' cut is part of the key: exact totals are those of the
	// same batches only.
	cut := fmt.Sprintf("batch-rows=%d batch-entries=%d batch-bytes=%d", o.BatchRows, o.BatchEntries, o.BatchBytes)
	key := fmt.Sprintf("%s size=%d mtime=%d %s", abs, st.Size(), st.ModTime().UnixNano(), cut)
	if st.IsDir() {
		// A directory's own size and time miss a file changed, or added
		// to a subdirectory: the key holds its tree's fingerprint.
		in, err := shard.Describe(input)
		if err != nil {
			return lda.Checkpoint{}, err
		}
		key = fmt.Sprintf("%s files=%s size=%d %s", abs, in.Fingerprint, in.Size, cut)
	}
	return lda.Checkpoint{Dir: *c.dir, Key: key, Every: every}, nil
}
