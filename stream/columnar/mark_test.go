package columnar

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/streamfit/streamfit/internal/mmap"
)

// decodedMark drops the mapping below the first record batch not yet
// decoded, whatever order the batches finish in, rounded down to a page; it
// drops nothing without the blocks (footer unreadable) and never past the
// mapping (blocks read when the table was opened, file since shrunk).
func TestDecodedMarkDropsBelowFirstUnfinished(t *testing.T) {
	page := int64(mmap.PageSize)
	path := filepath.Join(t.TempDir(), "m")
	if err := os.WriteFile(path, make([]byte, 8*page), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	mapped, err := mmap.Map(f, int(8*page))
	if errors.Is(err, errors.ErrUnsupported) {
		t.Skip("no mmap on this platform")
	}
	if err != nil {
		t.Fatalf("mmap: %v", err)
	}
	defer mmap.Unmap(mapped)
	blocks := []ipcBlock{{offset: 8}, {offset: 2*page + 100}, {offset: 5 * page}, {offset: 100 * page}}
	m := &decodedMark{mapped: mapped, blocks: blocks, finished: make([]bool, 4)}
	for _, c := range []struct {
		done int
		want int64
	}{{1, 0}, {0, 5 * page}, {3, 5 * page}, {2, 8 * page}} {
		m.decoded(c.done)
		if m.droppedTo != c.want {
			t.Fatalf("after record %d: dropped to %d, want %d", c.done, m.droppedTo, c.want)
		}
	}
	// Records 0 and 1 done: the drop stops at the page of record 2's
	// unaligned block; with 2 done as well, at the mapping's end, though
	// record 3's block lies beyond it.
	m = &decodedMark{mapped: mapped, blocks: []ipcBlock{{offset: 8}, {offset: page}, {offset: 2*page + 100}, {offset: 100 * page}}, finished: make([]bool, 4)}
	m.decoded(0)
	m.decoded(1)
	if m.droppedTo != 2*page {
		t.Fatalf("dropped to %d, want %d", m.droppedTo, 2*page)
	}
	m.decoded(2)
	if m.droppedTo != 8*page {
		t.Fatalf("dropped to %d, want the mapping's %d", m.droppedTo, 8*page)
	}
	m = &decodedMark{mapped: mapped, finished: make([]bool, 4)}
	m.decoded(0)
	m.decoded(1)
	if m.droppedTo != 0 {
		t.Fatal("dropped pages without the blocks")
	}
}
