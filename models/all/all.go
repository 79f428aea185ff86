// Package all registers every model of streamfit in the models registry
// (models.Register): a program imports it for that effect and then finds
// any model by name (models.Lookup, models.Kinds). The order here is the
// order in which commands list the models.
package all

import (
	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/models/gmm"
	"github.com/streamfit/streamfit/models/hmm"
	"github.com/streamfit/streamfit/models/ica"
	"github.com/streamfit/streamfit/models/lda"
	"github.com/streamfit/streamfit/models/markov"
	"github.com/streamfit/streamfit/models/multiview"
)

func init() {
	for _, k := range []models.Kind{
		lda.Kind,
		lda.TopicKind,
		gmm.Kind,
		markov.ChainKind,
		markov.HMMKind,
		ica.Kind,
		hmm.Kind,
		multiview.Kind,
	} {
		models.Register(k)
	}
}
