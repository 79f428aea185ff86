package stream

import "testing"

// TestShare: the views of a shared batch hold its documents, and the batch
// goes back to its free list only when every view has been released (each
// view's second release does nothing).
func TestShare(t *testing.T) {
	l := NewFreeList(0)
	b := l.Get(7)
	b.AppendDoc([]int32{1, 2}, []int32{3, 4})
	vs := b.Share(3)
	for i, v := range vs {
		if v == b || v.Start != 7 || v.Len() != 1 || v.Terms[1] != 2 {
			t.Fatalf("view %d: %+v", i, v)
		}
	}
	vs[0].Release()
	vs[0].Release()
	vs[1].Release()
	if got := l.Get(0); got == b {
		t.Fatal("the batch was back on its free list before its last view was released")
	}
	vs[2].Release()
	if got := l.Get(0); got != b {
		t.Error("the batch did not go back to its free list when its last view was released")
	}
}
