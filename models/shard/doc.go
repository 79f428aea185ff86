// Package shard is the shard workflow of a fit, for every model: it plans
// a fit's passes, computes the statistics of one pass over one shard of the
// data (input files, ranges of their rows, ranges of their row groups or
// record batches), merges the statistics of shards, fits from merged
// statistics, and appends the statistics of new data to earlier ones,
// checking the drift of the basis a pass depends on. The command line
// (streamfit stats, merge, fit --from-stats) calls it, and so can a Go
// program or a distributed pipeline that runs each shard on another
// machine.
//
// The statistics of a pass add up exactly: shards cut at batch boundaries
// (row groups, or row ranges that begin and end at multiples of the batch
// size within a row group) give, merged in any order, the statistics of
// their union bit for bit, and a fit from them the model of a fit over the
// union. The models that read groups of rows in order (an HMM's sequences,
// snapshot sets) follow the rule Hadoop's input splits follow for records
// across block boundaries: a shard owns every group whose first row lies in
// its range (Part.Groups), so shards cut inside a group merge exactly too,
// with no state shared between shards.
package shard
