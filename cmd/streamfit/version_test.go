package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestVersion: `streamfit version`, `--version` and `version --json` name
// the Go release the binary was built with.
func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		code, out, msg := streamfit(t, args...)
		if code != 0 || !strings.HasPrefix(out, "streamfit ") || !strings.Contains(out, "go1.") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, out, msg)
		}
	}
	code, out, _ := streamfit(t, "version", "--json")
	var v versionInfo
	if err := json.Unmarshal([]byte(out), &v); code != 0 || err != nil || v.Version == "" || !strings.HasPrefix(v.Go, "go1.") {
		t.Errorf("version --json: exit %d, %q (%v)", code, out, err)
	}
}
