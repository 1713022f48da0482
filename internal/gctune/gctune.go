// Package gctune holds the garbage-collector settings of a process whose
// main work is signing CFEs. They are the program's choice, not the issuing
// use case's: the agent applies them when it starts serving
// (cmd/cfe-agent), and the issue path's benchmarks apply them too, so that
// they measure the path as the agent runs it. The package is a leaf.
package gctune

import (
	"os"
	"runtime/debug"
)

// Garbage-collector settings for a process whose main work is signing.
const (
	// gcPercent lets the heap grow to five times what is live before a
	// collection. The agent's live heap is a few MiB, and each CFE allocates
	// about 150 KiB that dies at once; the default (100) collects so often that
	// under load the collector takes about a tenth of the processor time that
	// signing needs.
	gcPercent = 400
	// memoryLimit is the soft limit that bounds the heap whatever gcPercent
	// allows: the collector works harder as the heap nears it.
	memoryLimit = 256 << 20
)

// Apply sets the garbage collector for a process that signs CFEs: a larger
// heap growth between collections, under a soft memory limit of 256 MiB.
// Settings the user gave in GOGC or GOMEMLIMIT are left alone.
func Apply() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(gcPercent)
	}
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		debug.SetMemoryLimit(memoryLimit)
	}
}
