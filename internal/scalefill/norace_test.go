//go:build !race

package scalefill_test

const raceEnabled = false
