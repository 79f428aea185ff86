// Package tensor owns the symmetric third-order tensor types shared by the
// layer that builds moment tensors (implicit) and the layer that decomposes
// them (solver): the Tensor interface a decomposition sees (its dimension and
// the contractions T(I,θ,θ) for a block of θ), the optional Slicer and Normer
// capabilities, and Sym3, the explicit packed tensor. It imports neither
// layer, so both can use it without importing each other; solver re-exports
// the names as aliases.
package tensor
