package app

import (
	"os"
	"strconv"
	"strings"
)

// readAgentRun reads how the process pid runs from /proc: its systemd
// unit from its cgroup, tray or headless from its command line.
func readAgentRun(pid int, _ string) agentRun {
	dir := "/proc/" + strconv.Itoa(pid) + "/"
	var r agentRun
	if b, err := os.ReadFile(dir + "cgroup"); err == nil {
		r.known = true
		r.unit, r.userUnit = unitOfCgroup(string(b))
	}
	if b, err := os.ReadFile(dir + "cmdline"); err == nil {
		r.known = true
		r.headless = headlessArgs(strings.Split(strings.TrimRight(string(b), "\x00"), "\x00"))
	}
	return r
}
