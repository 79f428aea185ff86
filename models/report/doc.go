// Package report turns a fitted model file into one self-contained HTML page a
// person can look at: for topic models (lda, topic) a map of the topics laid
// out by classical scaling of their Jensen–Shannon distances, each topic's
// most relevant words with the relevance slider λ of LDAvis, the topic
// weights, the documents' dominant topics (from a document–topic table) and
// per-topic figures from an evaluation file; for the dense models (gmm, ica,
// hmm, markov, hmm-snapshot, multiview) heat maps and bars of their
// parameters; for every model how it was fitted, as a table in words, and
// the fit's warnings in plain words (what each means, what to try), the
// fit's own words folded in a <details>. The page opens with the scores a
// person judges a model by — held-out perplexity, coherence (UMass, NPMI),
// topic diversity — when an evaluation file or held-out documents give
// them. The map's topic labels are placed so that none covers another. With
// a sweep over k (SweepFile, the JSON of `streamfit fit lda --k LIST
// --json`) the page draws each k's held-out perplexity against k with the
// coherence curves beside it, the recommended k marked.
//
// The page has no external resource: its script, style and data are inlined
// and a Content-Security-Policy forbids everything else (no network request
// can leave it). Only what the page shows is embedded — for a topic model the
// candidate words of each topic's bar chart, not the k×d matrix — so a report
// of k=100 topics over 100,000 words stays a few hundred kilobytes.
//
// Build reads the model and its companions and returns the page's Data;
// Write renders it to a file atomically (stream.CreateAtomic).
package report
