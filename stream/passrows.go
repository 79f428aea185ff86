package stream

import "iter"

// PassRows is the iterator of a dense pass written as a push loop: pass
// hands each batch to its yield until that returns false, and returns the
// pass's error, which the iterator yields last unless the consumer stopped
// early.
func PassRows(pass func(yield func(*Dense) bool) error) iter.Seq2[*Dense, error] {
	return func(yield func(*Dense, error) bool) {
		stopped := false
		err := pass(func(b *Dense) bool {
			stopped = !yield(b, nil)
			return !stopped
		})
		if err != nil && !stopped {
			yield(nil, err)
		}
	}
}
