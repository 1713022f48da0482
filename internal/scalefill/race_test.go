//go:build race

package scalefill_test

const raceEnabled = true
