package beamfit

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/streamfit/streamfit/cmd/streamfit-beam/objstore"
)

// The pipeline's paths on object stores: gs:// and s3:// inputs are read
// by the workers with ranged requests (package objstore registers both
// schemes with the streamfit readers), each pinned to the object's version
// the pipeline was planned on; outputs there are written locally and
// uploaded whole.

// LocalPath returns a file:// URL's path, and other paths as they are.
func LocalPath(p string) string {
	if rest, ok := strings.CutPrefix(p, "file://"); ok {
		return rest
	}
	return p
}

// Remote reports whether p is on an object store (gs://, s3://).
func Remote(p string) bool { return objstore.Remote(p) }

// expandRemote returns the files an argument on an object store names
// (objstore.Expand); ok is false for other arguments.
func expandRemote(arg string) (files []string, ok bool, err error) {
	if !objstore.Remote(arg) {
		return nil, false, nil
	}
	files, err = objstore.Expand(context.Background(), arg)
	return files, true, err
}

// pin fixes the version of the unit's object that its worker reads
// (objstore.Pin): a unit of an object rewritten after the pipeline was
// planned fails instead of reading other documents.
func (u Unit) pin() { objstore.Pin(u.Input.Path, u.Version) }

// withOutputs runs write with the outputs of o that are on an object
// store replaced by local temporary files, and uploads those when write
// succeeds, the statistics before the model (each object appears whole or
// not at all). When the model cannot be uploaded, the statistics are
// removed, so that a failed pipeline leaves neither, as a local one does.
func withOutputs(ctx context.Context, o Output, write func(Output) error) error {
	if !objstore.Remote(o.Model) && !objstore.Remote(o.Stats) {
		return write(o)
	}
	dir, err := os.MkdirTemp("", "streamfit-beam-out")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	local := o
	if objstore.Remote(o.Stats) {
		local.Stats = filepath.Join(dir, "merged.stats")
	}
	if objstore.Remote(o.Model) {
		local.Model = filepath.Join(dir, "model.json")
	}
	if err := write(local); err != nil {
		return err
	}
	if objstore.Remote(o.Stats) {
		if err := upload(ctx, local.Stats, o.Stats); err != nil {
			return err
		}
	}
	if objstore.Remote(o.Model) {
		if err := upload(ctx, local.Model, o.Model); err != nil {
			if o.Stats != "" {
				err = errors.Join(err, removeOutput(ctx, o.Stats))
			}
			return err
		}
	}
	return nil
}

// upload writes the local file to the object remote.
func upload(ctx context.Context, local, remote string) error {
	f, err := os.Open(local)
	if err != nil {
		return err
	}
	defer f.Close()
	return objstore.Upload(ctx, f, remote)
}

// removeOutput removes an output written before a later one failed.
func removeOutput(ctx context.Context, p string) error {
	if objstore.Remote(p) {
		return objstore.Remove(ctx, p)
	}
	return os.Remove(p)
}
