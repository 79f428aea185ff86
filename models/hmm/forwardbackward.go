package hmm

// transitions returns m's transitions row-major by the state left,
// a[i*k+j] = Pr(next j | now i) (T is by the state entered, T[j][i]), each
// entry at least 0: a moment fit's may fall below.
func transitions(m *Model) []float64 {
	k := m.K
	a := make([]float64, k*k)
	for i := range k {
		for j := range k {
			a[i*k+j] = max(m.T[j][i], 0)
		}
	}
	return a
}

// scaledForwardBackward runs the scaled forward and backward passes of one
// sequence of n steps: start pi, transitions a (transitions' layout) and
// emissions b (n×k, any factor common to a step's states). It fills al
// with the forward probabilities of each step normalised to sum 1, c with
// the normalisers (Σ log c is the log-likelihood when b holds
// probabilities), and be with the backward probabilities scaled by the
// same c, so that al·be is each step's state posterior. It returns −1, or
// the first step whose probability is 0 (or not finite), where it stops.
func scaledForwardBackward(pi, a, b []float64, n, k int, al, be, c []float64) int {
	for t := range n {
		row := al[t*k : (t+1)*k]
		for j := range k {
			var s float64
			if t == 0 {
				s = max(pi[j], 0)
			} else {
				prev := al[(t-1)*k : t*k]
				for i := range k {
					s += prev[i] * a[i*k+j]
				}
			}
			row[j] = s * b[t*k+j]
		}
		var ct float64
		for _, v := range row {
			ct += v
		}
		if !(ct > 0) || ct > 1e308 {
			return t
		}
		for j := range row {
			row[j] /= ct
		}
		c[t] = ct
	}
	for j := range k {
		be[(n-1)*k+j] = 1
	}
	for t := n - 2; t >= 0; t-- {
		for i := range k {
			var s float64
			for j := range k {
				s += a[i*k+j] * b[(t+1)*k+j] * be[(t+1)*k+j]
			}
			be[t*k+i] = s / c[t+1]
		}
	}
	return -1
}

// growTo returns s with length n, reallocated only when too short.
func growTo(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}
