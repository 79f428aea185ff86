// Package stream holds the core of streamfit's data layer: the batch types,
// sources and writers, options, errors, the format registry and the ordered
// parallel pipelines that passes run on. The format packages (stream/docword,
// stream/columnar, stream/text) build on it and register themselves with it;
// the public package stream re-exports it and links every built-in format in,
// so its registry is always complete. Callers outside the data layer use the
// public package.
package stream
