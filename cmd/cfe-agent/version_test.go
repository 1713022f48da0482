package main_test

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestCLI_Version: the values the Makefile passes with -ldflags -X come out
// of "cfe-agent version" and "--version".
func TestCLI_Version(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "cfe-agent")
	ldflags := "-X main.version=v1.2.3-4-gabcdef -X main.commit=abcdef0123 -X main.buildDate=2026-11-25T01:02:03Z"
	if out, err := exec.Command("go", "build", "-ldflags", ldflags, "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	want := "cfe-agent versión v1.2.3-4-gabcdef\ncommit: abcdef0123\ncompilado: 2026-11-25T01:02:03Z\ngo: " +
		runtime.Version() + "\nsistema: " + runtime.GOOS + "/" + runtime.GOARCH + "\n"
	for _, args := range [][]string{{"version"}, {"--version"}} {
		cmd := exec.Command(bin, args...)
		cmd.Env = agentEnv("CFE_AGENT_DATA_DIR=" + t.TempDir())
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		if string(out) != want {
			t.Errorf("cfe-agent %s printed\n%s\nwant\n%s", strings.Join(args, " "), out, want)
		}
	}
}
