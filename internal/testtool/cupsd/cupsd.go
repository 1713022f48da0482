// Package cupsd runs a private CUPS server with an emulated IPP Everywhere
// printer for tests and benchmarks, following ENGINEERING-NOTES.md "Printing": cupsd on a
// free port of 127.0.0.1 with its own configuration, spool and logs; a
// private D-Bus system bus and an Avahi daemon limited to the loopback
// interface (ippeveprinter will not start without DNS-SD); and a raw queue
// that reaches the emulator. Every daemon is a child of the test, stopped by
// its pid when the test ends.
//
// Environments run side by side, in one test binary or several: each has
// its own ports, folder and bus, and its Avahi daemon runs in a mount
// namespace of its own with a private /run/avahi-daemon, where Avahi keeps
// its pid file (a second Avahi would otherwise refuse to start, "Daemon
// already running").
//
// The printer package's tests and the agent's end-to-end tests (GET
// /printers) share it.
package cupsd

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/internal/testtool"
)

// avahiRunDir is where Avahi keeps its pid file (a compile-time path):
// each environment's Avahi gets a private one.
const avahiRunDir = "/run/avahi-daemon"

// RawQueue is the queue Start creates: a raw queue hands a PDF to the
// emulated printer byte for byte (so a test can compare it).
const RawQueue = "mostrador"

// Env is a running private CUPS server.
type Env struct {
	Dir    string   // the server's root: configuration, spool, logs
	Server string   // "127.0.0.1:port" of cupsd
	Port   int      // cupsd's port
	IPP    string   // the emulated printer's URI
	Spool  string   // where the emulator keeps the documents it receives
	Vars   []string // the environment the daemons and tools run with
}

// Start starts the environment. It needs root (cupsd and its filters run as
// system users); without root, or with a tool missing, the test is skipped,
// or failed under CFE_STRICT_TOOLS=1.
func Start(t testing.TB) *Env {
	t.Helper()
	testtool.RequireRoot(t, "the CUPS tests run cupsd, which")
	tools := map[string]string{}
	for _, tool := range []string{"cupsd", "ippeveprinter", "lpadmin", "cupsdisable", "cupsenable", "cupsreject",
		"cupsaccept", "dbus-daemon", "avahi-daemon", "ipptool", "unshare", "mount"} {
		tools[tool] = testtool.Require(t, tool)
	}
	dir, err := os.MkdirTemp("", "cfe-cups-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	// cupsd's filters and backends run as the lp user: the tree must be
	// readable by it.
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	e := &Env{Dir: dir, Port: FreePort(t), Spool: filepath.Join(dir, "printer")}
	e.Server = "127.0.0.1:" + strconv.Itoa(e.Port)
	ippPort := FreePort(t)
	e.IPP = fmt.Sprintf("ipp://localhost:%d/ipp/print", ippPort)
	for _, d := range []string{"spool/tmp", "cache", "state", "log", "printer", "ppd"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(dir, "spool"), 0o1777); err != nil {
		t.Fatal(err)
	}
	e.write(t, "cupsd.conf", fmt.Sprintf(`Listen 127.0.0.1:%d
LogLevel info
WebInterface No
Browsing No
DefaultAuthType None
<Location />
  Order allow,deny
  Allow all
</Location>
<Location /admin>
  Order allow,deny
  Allow all
</Location>
<Policy default>
  <Limit All>
    Order deny,allow
  </Limit>
</Policy>
`, e.Port))
	e.write(t, "cups-files.conf", strings.ReplaceAll(`ServerRoot DIR
RequestRoot DIR/spool
TempDir DIR/spool/tmp
CacheDir DIR/cache
StateDir DIR/state
ErrorLog DIR/log/error_log
AccessLog DIR/log/access_log
PageLog DIR/log/page_log
SystemGroup root
`, "DIR", dir))
	e.write(t, "avahi.conf", "[server]\nallow-interfaces=lo\nuse-ipv6=no\nenable-dbus=yes\n"+
		"[wide-area]\nenable-wide-area=no\n[publish]\npublish-hinfo=no\npublish-workstation=no\n")

	bus := filepath.Join(dir, "system_bus_socket")
	e.Vars = append(os.Environ(), "DBUS_SYSTEM_BUS_ADDRESS=unix:path="+bus)
	e.start(t, "dbus", tools["dbus-daemon"], "--config-file=/usr/share/dbus-1/system.conf",
		"--address=unix:path="+bus, "--nofork", "--nopidfile", "--nosyslog")
	WaitFor(t, "the D-Bus socket", func() bool { _, err := os.Stat(bus); return err == nil })
	// unshare execs the shell, which execs Avahi: the pid start stops is
	// Avahi's.
	avahi := e.start(t, "avahi", tools["unshare"], "--mount", "--propagation", "private", "--",
		"/bin/sh", "-c", `mkdir -p `+avahiRunDir+` && "$0" -t tmpfs -o size=1m,mode=0755 tmpfs `+avahiRunDir+` && exec "$@"`,
		tools["mount"], tools["avahi-daemon"], "-f", filepath.Join(dir, "avahi.conf"), "--no-chroot",
		"--no-drop-root", "--no-rlimits", "--no-proc-title")
	WaitFor(t, "Avahi", func() bool { return strings.Contains(avahi(), "Server startup complete") })
	e.start(t, "cupsd", tools["cupsd"], "-f", "-c", filepath.Join(dir, "cupsd.conf"), "-s", filepath.Join(dir, "cups-files.conf"))
	WaitFor(t, "cupsd", func() bool { return Dialable(e.Server) })
	// "-c /bin/true" prints at once (the emulator otherwise takes 5 to 15
	// seconds per job); -k keeps each document in the spool directory.
	e.start(t, "ippeveprinter", tools["ippeveprinter"], "-k", "-d", e.Spool, "-f", "application/pdf",
		"-c", "/bin/true", "-p", strconv.Itoa(ippPort), "-n", "localhost", "Impresora de prueba")
	WaitFor(t, "ippeveprinter", func() bool { return Dialable("127.0.0.1:" + strconv.Itoa(ippPort)) })

	// A raw queue is deprecated in CUPS but still passes documents
	// untouched, which lets the test compare bytes.
	e.Run(t, tools["lpadmin"], "-h", e.Server, "-p", RawQueue, "-v", e.IPP, "-m", "raw", "-E")
	return e
}

func (e *Env) write(t testing.TB, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(e.Dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// start runs a daemon in the foreground as a child of the test and stops it
// by its pid at the end; it returns a function that reads its output so far.
func (e *Env) start(t testing.TB, name, bin string, args ...string) func() string {
	t.Helper()
	logPath := filepath.Join(e.Dir, "log", name+".out")
	out, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env, cmd.Stdout, cmd.Stderr = e.Vars, out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); _ = out.Close(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("%s output:\n%s", name, b)
		}
	})
	return func() string { b, _ := os.ReadFile(logPath); return string(b) }
}

// Run runs a command with the environment's variables and fails on error.
func (e *Env) Run(t testing.TB, bin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = e.Vars
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(bin), strings.Join(args, " "), err, out)
	}
	return string(out)
}

// FreePort returns a port of 127.0.0.1 that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Dialable reports whether addr accepts a TCP connection.
func Dialable(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err == nil {
		_ = c.Close()
	}
	return err == nil
}

// WaitFor polls cond for up to 15 seconds.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("%s did not come up", what)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
