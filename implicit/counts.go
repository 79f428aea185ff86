package implicit

import "github.com/streamfit/streamfit/stream"

// MinTokens is the shortest document the triple estimator can use; shorter
// documents are skipped (and counted) by every accumulator, so all moments of a
// fit average over the same documents.
const MinTokens = 3

// Counts records what a pass saw.
type Counts struct {
	// Docs is the number of documents used (at least MinTokens tokens).
	Docs int64 `json:"docs"`
	// Skipped is the number of documents with fewer than MinTokens tokens.
	Skipped int64 `json:"skipped"`
	// Tokens is the number of tokens in the used documents.
	Tokens int64 `json:"tokens"`
}

// Merge adds o into c.
func (c *Counts) Merge(o Counts) {
	c.Docs += o.Docs
	c.Skipped += o.Skipped
	c.Tokens += o.Tokens
}

// Add counts the documents of b without accumulating any moment.
func (c *Counts) Add(b *stream.Docs) {
	for i := range b.Len() {
		c.count(b.Length(i))
	}
}

// count records one document of length l and reports whether it is usable.
func (c *Counts) count(l int64) bool {
	if l < MinTokens {
		c.Skipped++
		return false
	}
	c.Docs++
	c.Tokens += l
	return true
}
