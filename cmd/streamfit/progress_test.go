package main

import (
	"flag"
	"io"
	"testing"
)

// TestProgressFlag checks that --progress reads back what was set (the stats
// command rebuilds its flags into the next command it prints) and refuses
// other values.
func TestProgressFlag(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	m := addProgressFlag(fs)
	if got := fs.Lookup("progress").Value.String(); got != "auto" {
		t.Fatalf("default reads back %q", got)
	}
	if err := fs.Parse([]string{"--progress", "off"}); err != nil {
		t.Fatal(err)
	}
	if *m != "off" || fs.Lookup("progress").Value.String() != "off" {
		t.Fatalf("--progress off gave %q, reads back %q", *m, fs.Lookup("progress").Value.String())
	}
	if err := fs.Parse([]string{"--progress", "loud"}); err == nil {
		t.Fatal("--progress loud accepted")
	}
}
