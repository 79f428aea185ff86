package lda

// DefaultEMPasses caps the EM passes of the default fit (DefaultConfig, and
// a fit set by flags, Settings: the command line's `fit lda`); the stopping
// rule (EM.Tol) usually ends them earlier.
const DefaultEMPasses = 10

// DefaultConfig is the configuration of the command line's default fit of
// k topics: α₀ = 1, seed 1, the spectral start followed by up to
// DefaultEMPasses EM passes that re-estimate α (on a sample of the
// documents first when the corpus is large, see EM.Sample). The zero value
// of Config with K and Alpha0 set is the pure spectral fit, which is
// faster and consistent but scores worse on real text; start from
// DefaultConfig and change what you need.
func DefaultConfig(k int) Config {
	return Config{K: k, Alpha0: 1, Seed: 1, EM: EM{Passes: DefaultEMPasses, FitAlpha: true}}
}
