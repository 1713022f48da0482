package main

import "testing"

func TestConsoleWanted(t *testing.T) {
	t.Parallel()
	cases := []struct {
		args []string
		want bool
	}{
		{nil, false},
		{[]string{"--data-dir", `C:\datos caja`}, false},
		{[]string{"--data-dir=D:\\x", "--profile", "caja2", "--headless"}, false},
		{[]string{"--listen", "127.0.0.1:0"}, false},
		{[]string{"version"}, true},
		{[]string{"--data-dir", `C:\datos`, "doctor"}, true},
		{[]string{"serve", "--listen", "127.0.0.1:0"}, true},
		{[]string{"service", "status"}, true},
		{[]string{"--version"}, true},
		{[]string{"-h"}, true},
		{[]string{"no-such-command"}, true}, // the error must be seen
	}
	for _, c := range cases {
		if got := consoleWanted(c.args); got != c.want {
			t.Errorf("consoleWanted(%q) = %v, want %v", c.args, got, c.want)
		}
	}
}
