//go:build linux

package localapi_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/localapi"
	"github.com/cfe-agent/cfe-agent/localapi/localclient"
)

// envNetnsCalls tells the helper process that plays the remote terminal which
// calls to make: "url token" pairs separated by newlines (token may be empty).
const envNetnsCalls = "CFE_LOCALAPI_NETNS_CALLS"

// TestSecurity_CallerFromAnotherAddress runs the Go client in a network
// namespace of its own, linked to this one by a veth pair, so that the server
// sees a real non-loopback peer. It needs root and ip(8).
func TestSecurity_CallerFromAnotherAddress(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("creating a network namespace needs root")
	}
	ipTool := testtool.Require(t, "ip")
	ns, hostIP, peerIP := setupNetns(t, ipTool)

	const token = "terminal-token-0123456789"
	lanOn := startServer(t, func(c *localapi.ServerConfig) {
		c.Listen = hostIP + ":0"
		c.LAN = localapi.LANConfig{Enabled: true, Tokens: []string{token}}
	})
	lanOff := startServer(t, func(c *localapi.ServerConfig) { c.Listen = hostIP + ":0" })

	tests := []struct {
		name  string
		srv   *testServer
		token string
		want  string
	}{
		{"LAN on, no token", lanOn, "", "401"},
		{"LAN on, wrong token", lanOn, "terminal-token-0123456780", "401"},
		{"LAN on, right token", lanOn, token, "200"},
		{"LAN off, right token", lanOff, token, "403"},
	}
	// One helper process makes every call: starting one takes about a second.
	calls := make([]string, len(tests))
	for i, tc := range tests {
		calls[i] = tc.srv.srv.BaseURL() + " " + tc.token
	}
	got := runInNetns(t, ipTool, ns, calls)
	for i, tc := range tests {
		if got[i] != tc.want {
			t.Errorf("%s: the remote client got %q, want %q", tc.name, got[i], tc.want)
		}
	}

	// The server saw the peer's address, not loopback.
	if !strings.Contains(lanOn.logs.String(), `"remote":"`+peerIP+`"`) {
		t.Fatalf("the access log does not show the remote address %s:\n%s", peerIP, lanOn.logs)
	}
}

// TestHelperNetnsClient is the remote terminal: it only runs inside the
// namespace, started by runInNetns, and prints the HTTP status of each call.
func TestHelperNetnsClient(t *testing.T) {
	calls := os.Getenv(envNetnsCalls)
	if calls == "" {
		t.Skip("helper process of TestSecurity_CallerFromAnotherAddress")
	}
	for i, call := range strings.Split(calls, "\n") {
		url, token, _ := strings.Cut(call, " ")
		c, err := localclient.New(url, localclient.Options{Token: token})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.State(context.Background())
		var se *localclient.StatusError
		switch {
		case err == nil:
			fmt.Printf("STATUS %d 200\n", i)
		case errors.As(err, &se):
			fmt.Printf("STATUS %d %d\n", i, se.StatusCode)
		default:
			t.Fatal(err)
		}
	}
}

// runInNetns runs TestHelperNetnsClient inside the namespace ns and returns
// the status of each call.
func runInNetns(t *testing.T, ipTool, ns string, calls []string) []string {
	t.Helper()
	cmd := exec.Command(ipTool, "netns", "exec", ns, os.Args[0],
		"-test.run=^TestHelperNetnsClient$", "-test.count=1")
	cmd.Env = append(os.Environ(), envNetnsCalls+"="+strings.Join(calls, "\n"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helper in the namespace failed: %v\n%s", err, out)
	}
	got := make([]string, len(calls))
	for _, line := range strings.Split(string(out), "\n") {
		var i int
		var status string
		if n, _ := fmt.Sscanf(line, "STATUS %d %s", &i, &status); n == 2 && i >= 0 && i < len(got) {
			got[i] = status
		}
	}
	return got
}

// netnsSeq numbers the namespaces of this process: each test gets its own
// names, since the kernel destroys a deleted namespace's veth pair
// asynchronously, and a next test reusing the name could find it still there.
var netnsSeq atomic.Int32

// setupNetns creates a namespace and a veth pair with a /30 of 10.213.N.0
// (N from the process id and the sequence, so that parallel runs and
// successive tests do not collide), and removes them when the test ends. It
// returns the namespace's name, this side's address and the namespace's.
func setupNetns(t *testing.T, ipTool string) (ns, hostIP, peerIP string) {
	t.Helper()
	seq := int(netnsSeq.Add(1))
	ns = fmt.Sprintf("cfe-localapi-%d-%d", os.Getpid(), seq)
	n := (os.Getpid() + 37*seq) % 250
	hostIP, peerIP = fmt.Sprintf("10.213.%d.1", n), fmt.Sprintf("10.213.%d.2", n)
	hostIf, peerIf := fmt.Sprintf("cfla%d-%dh", os.Getpid()%100000, seq%100), fmt.Sprintf("cfla%d-%dn", os.Getpid()%100000, seq%100)

	run := func(args ...string) error {
		out, err := exec.Command(ipTool, args...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	if err := run("netns", "add", ns); err != nil {
		// Root without the capability (a restricted container): not this
		// package's failure unless the CI asked for every tool to work.
		if os.Getenv("CFE_STRICT_TOOLS") == "1" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	t.Cleanup(func() {
		// Deleting the namespace destroys the veth end inside it, and with it
		// the pair.
		if err := run("netns", "del", ns); err != nil {
			t.Error(err)
		}
	})
	for _, args := range [][]string{
		{"link", "add", hostIf, "type", "veth", "peer", "name", peerIf},
		{"link", "set", peerIf, "netns", ns},
		{"addr", "add", hostIP + "/30", "dev", hostIf},
		{"link", "set", hostIf, "up"},
		{"-n", ns, "addr", "add", peerIP + "/30", "dev", peerIf},
		{"-n", ns, "link", "set", peerIf, "up"},
		{"-n", ns, "link", "set", "lo", "up"},
	} {
		if err := run(args...); err != nil {
			run("link", "del", hostIf) // in case the pair exists but never moved
			t.Fatal(err)
		}
	}
	return ns, hostIP, peerIP
}
