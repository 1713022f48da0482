package main

import "testing"

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
