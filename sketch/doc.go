// Package sketch finds the top eigenpairs of large symmetric operators that are
// known only through products with a block of vectors, such as a second moment
// M2 whose product M2·Ω is one streamed pass over a corpus. It owns the
// randomized range finder (with oversampling and optional power passes), the
// Rayleigh–Ritz step on the small projected matrix, and an exact dense path for
// small dimensions.
//
// sketch must not read files or know any model: an Operator hides where its
// products come from, and every product may be a whole pass over the data.
// All dense linear algebra goes through gonum.
package sketch
