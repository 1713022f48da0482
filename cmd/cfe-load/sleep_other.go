//go:build !linux

package main

import "time"

// sleepPrecisely sleeps for d; only Linux has the precise version.
func sleepPrecisely(d time.Duration) { time.Sleep(d) }
