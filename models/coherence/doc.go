// Package coherence scores the topics of a topic model against a corpus, the
// way text-mining users compare models whose likelihoods are not comparable:
// the UMass and NPMI coherence of each topic's top words over the documents
// (do the words a topic ranks highest occur together?) and the topic
// diversity of the model (do the topics rank different words?).
//
// It owns these scores only; the topics come from any model (models.Model,
// a gensim matrix loaded by models.Load) and the documents from any
// stream.DocSource. One streamed pass counts, in each document, which of the
// topics' top words occur; memory is bounded by the number of topics times
// the square of the number of top words per worker (plus one int32 per
// vocabulary word), whatever the number of documents.
package coherence
