package beamfit_test

import (
	"context"
	"log"

	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"

	"github.com/streamfit/streamfit/cmd/streamfit-beam/beamfit"
	"github.com/streamfit/streamfit/stream"
	_ "github.com/streamfit/streamfit/stream/columnar"
)

// The fit of k=20 topics over a directory of Parquet files, each row group
// a work unit, on prism (in this process); the same options run on any
// registered runner ("dataflow", "flink", "spark", "universal").
func ExampleRun() {
	files, err := beamfit.Expand([]string{"corpus/part-*.parquet"})
	if err != nil {
		log.Fatal(err)
	}
	err = beamfit.Run(context.Background(), "prism", files, beamfit.Options{
		Read: stream.Options{BatchRows: 4096},
		Fit:  beamfit.Settings{K: 20, Alpha0: 1, Seed: 1},
		Out:  beamfit.Output{Model: "/shared/model.json", Stats: "/shared/all2.stats"},
	})
	if err != nil {
		log.Fatal(err)
	}
}
