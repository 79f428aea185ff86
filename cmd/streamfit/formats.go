package main

// The data formats the command reads and writes register themselves here.
import (
	_ "github.com/streamfit/streamfit/stream/columnar"
	_ "github.com/streamfit/streamfit/stream/docword"
	_ "github.com/streamfit/streamfit/stream/text"
)
