// Package models holds the accuracy experiments of the dense-sample models
// (models/gmm, models/markov, ...): each sub-directory is a command that
// regenerates one table of RESULTS.md. Nothing in the library depends on it.
package models
