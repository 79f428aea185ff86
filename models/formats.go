package models

// A program that fits or reads a model opens its data with stream.Open:
// linking every built-in format here makes them all known to it, whichever
// model package the program starts from.
import _ "github.com/streamfit/streamfit/stream/formats"
