package main

import (
	"testing"
	"time"
)

func TestLocalBaseURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://127.0.0.1:18787":   "http://127.0.0.1:18787",
		"http://0.0.0.0:18787":     "http://127.0.0.1:18787",
		"http://[::]:18787":        "http://[::1]:18787",
		"http://192.168.1.5:18787": "http://192.168.1.5:18787",
	} {
		if got := localBaseURL(in); got != want {
			t.Errorf("localBaseURL(%s) = %s, want %s", in, got, want)
		}
	}
}

func TestBackupName(t *testing.T) {
	at := time.Date(2026, 11, 25, 1, 30, 5, 123e6, time.UTC)
	for _, auto := range []bool{false, true} {
		name := backupName("caja1", at, auto)
		got, ok := backupTime("caja1", name, auto)
		if !ok || !got.Equal(at) {
			t.Fatalf("backupTime(%s) = %v %v, want %v", name, got, ok, at)
		}
		if _, ok := backupTime("caja1", name, !auto); ok {
			t.Fatalf("%s read as automatic=%v too", name, !auto)
		}
		if _, ok := backupTime("caja", name, auto); ok {
			t.Fatalf("%s read as a backup of profile caja", name)
		}
	}
	// Names sort by time, which rotation relies on.
	if a, b := backupName("p", at, true), backupName("p", at.Add(time.Millisecond), true); a >= b {
		t.Fatalf("%s does not sort before %s", a, b)
	}
}
