package data

import "time"

// Choices the interface leaves open that belong to the records (described in
// docs/sandbox.md).

// OpenTimeout is how long opening a file another process holds waits: the
// emulator's own file and each company's store.
const OpenTimeout = 2 * time.Second

// Company API key rate limits used when neither the key nor its company sets
// one (interface §8.2: numeric defaults not shown).
const (
	DefaultKeyPerMinute = 120
	DefaultKeyPerHour   = 3600
)

// Sucursal is the branch code at DGI of every company's CFEs (CdgDGISucur).
const Sucursal = 1

// maxPointText bounds the text fields of an issuing point.
const maxPointText = 100
