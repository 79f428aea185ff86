package text

import (
	"context"
	"errors"
	"iter"
	"strconv"
	"testing"

	"github.com/streamfit/streamfit/stream"
)

// TestHeldOut checks both parts against the rule i%every == every−1 over
// batch sizes that do and do not divide every, and that the parts'
// document counts and numbering are their own.
func TestHeldOut(t *testing.T) {
	docs := make([]string, 47)
	for i := range docs {
		docs[i] = "doc" + strconv.Itoa(i)
	}
	for _, every := range []int{2, 3, 10} {
		var wantTrain, wantTest []string
		for i, s := range docs {
			if i%every == every-1 {
				wantTest = append(wantTest, s)
			} else {
				wantTrain = append(wantTrain, s)
			}
		}
		for _, batch := range []int{1, 4, 10, 100} {
			train, test := HeldOut(&memTexts{docs: docs, batch: batch}, every)
			for _, c := range []struct {
				name string
				src  stream.TextSource
				want []string
			}{{"train", train, wantTrain}, {"test", test, wantTest}} {
				got, err := collectTexts(t, c.src)
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != len(c.want) {
					t.Fatalf("every %d, batch %d, %s: %d documents, want %d", every, batch, c.name, len(got), len(c.want))
				}
				for i := range got {
					if got[i] != c.want[i] {
						t.Fatalf("every %d, batch %d, %s: document %d is %q, want %q", every, batch, c.name, i, got[i], c.want[i])
					}
				}
				if rows := c.src.Info().Rows; rows != int64(len(c.want)) {
					t.Errorf("every %d, %s: Info().Rows %d, want %d", every, c.name, rows, len(c.want))
				}
			}
		}
	}
}

// failingTexts yields one batch, then an error.
type failingTexts struct{ err error }

func (f failingTexts) Info() stream.Info { return stream.Info{Rows: -1} }

func (f failingTexts) Texts(context.Context) iter.Seq2[*stream.Texts, error] {
	return func(yield func(*stream.Texts, error) bool) {
		if yield(&stream.Texts{Text: []string{"a", "b", "c"}}, nil) {
			yield(nil, f.err)
		}
	}
}

func TestHeldOutPassesErrorsAndUnknownCounts(t *testing.T) {
	boom := errors.New("boom")
	train, test := HeldOut(failingTexts{boom}, 2)
	if rows := train.Info().Rows; rows != -1 {
		t.Errorf("unknown count became %d", rows)
	}
	for _, src := range []stream.TextSource{train, test} {
		if _, err := collectTexts(t, src); !errors.Is(err, boom) {
			t.Errorf("error %v, want %v", err, boom)
		}
	}
}
