package main

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"
)

// runVersion prints the command's version: the module version, the commit
// it was built from (and whether the tree had changes), and the Go release.
func runVersion(_ context.Context, e *env, args []string) error {
	fs := newFlags("version", "", "print streamfit's version, the commit it was built from and the Go release")
	asJSON := fs.Bool("json", false, "print them as a JSON object (version, commit, modified, go)")
	if _, err := e.parse(fs, args); err != nil {
		return err
	}
	v := buildVersion()
	if *asJSON {
		return json.NewEncoder(e.stdout).Encode(v)
	}
	fmt.Fprintln(e.stdout, v)
	return nil
}

// versionInfo is what `streamfit version` prints.
type versionInfo struct {
	Version  string `json:"version"`
	Commit   string `json:"commit,omitempty"`
	Modified bool   `json:"modified,omitempty"`
	Go       string `json:"go"`
}

// buildVersion reads the version from the binary's build information.
func buildVersion() versionInfo {
	v := versionInfo{Version: "(devel)", Go: runtime.Version()}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			v.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				v.Commit = s.Value
			case "vcs.modified":
				v.Modified = s.Value == "true"
			}
		}
	}
	return v
}

// String is the one line `streamfit version` prints.
func (v versionInfo) String() string {
	s := "streamfit " + v.Version
	if v.Commit != "" {
		s += ", commit " + v.Commit[:min(len(v.Commit), 12)]
		if v.Modified {
			s += " (with local changes)"
		}
	}
	return s + ", " + v.Go
}
