package implicit

import "errors"

// ErrNoDocs reports a pass without a single document of at least MinTokens
// tokens, so no moment can be estimated.
var ErrNoDocs = errors.New("no usable documents: every document has fewer than 3 tokens (or the input is empty)")
