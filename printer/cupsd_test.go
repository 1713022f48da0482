package printer

import (
	"bufio"
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

// A cupsEnv is a private CUPS server with an emulated IPP Everywhere printer
// (ippeveprinter), following ENGINEERING-NOTES.md "Printing": cupsd on a
// free port of 127.0.0.1 with its own configuration, spool and logs; a
// private D-Bus system bus and an Avahi daemon limited to the loopback
// interface (ippeveprinter will not start without DNS-SD); and queues that
// reach the emulator. Every daemon is a child of the test, stopped by its
// pid when the test ends.
type cupsEnv struct {
	dir    string
	server string // "127.0.0.1:port" of cupsd
	port   int
	ipp    string // the emulated printer's URI
	spool  string // where the emulator keeps the documents it receives
	env    []string
}

// The queues of a cupsEnv: a raw queue hands our PDF to the printer byte
// for byte (so the test can compare it); CUPS filters a driver queue's.
const rawQueue = "mostrador"

// startCUPS starts the environment. It needs root (cupsd and its filters
// run as system users); without root the test is skipped, and a missing
// tool skips it too unless CFE_STRICT_TOOLS=1.
func startCUPS(t *testing.T) *cupsEnv {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("the CUPS tests run cupsd and need root")
	}
	tools := map[string]string{}
	for _, tool := range []string{"cupsd", "ippeveprinter", "lpadmin", "cupsdisable", "cupsenable", "cupsreject",
		"cupsaccept", "dbus-daemon", "avahi-daemon", "ipptool"} {
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
	e := &cupsEnv{dir: dir, port: freePort(t), spool: filepath.Join(dir, "printer")}
	e.server = "127.0.0.1:" + strconv.Itoa(e.port)
	ippPort := freePort(t)
	e.ipp = fmt.Sprintf("ipp://localhost:%d/ipp/print", ippPort)
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
`, e.port))
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
	e.env = append(os.Environ(), "DBUS_SYSTEM_BUS_ADDRESS=unix:path="+bus)
	e.start(t, "dbus", tools["dbus-daemon"], "--config-file=/usr/share/dbus-1/system.conf",
		"--address=unix:path="+bus, "--nofork", "--nopidfile", "--nosyslog")
	waitFor(t, "the D-Bus socket", func() bool { _, err := os.Stat(bus); return err == nil })
	avahi := e.start(t, "avahi", tools["avahi-daemon"], "-f", filepath.Join(dir, "avahi.conf"), "--no-chroot",
		"--no-drop-root", "--no-rlimits", "--no-proc-title")
	waitFor(t, "Avahi", func() bool { return strings.Contains(avahi(), "Server startup complete") })
	e.start(t, "cupsd", tools["cupsd"], "-f", "-c", filepath.Join(dir, "cupsd.conf"), "-s", filepath.Join(dir, "cups-files.conf"))
	waitFor(t, "cupsd", func() bool { return dialable(e.server) })
	// "-c /bin/true" prints at once (the emulator otherwise takes 5 to 15
	// seconds per job); -k keeps each document in the spool directory.
	e.start(t, "ippeveprinter", tools["ippeveprinter"], "-k", "-d", e.spool, "-f", "application/pdf",
		"-c", "/bin/true", "-p", strconv.Itoa(ippPort), "-n", "localhost", "Impresora de prueba")
	waitFor(t, "ippeveprinter", func() bool { return dialable("127.0.0.1:" + strconv.Itoa(ippPort)) })

	// A raw queue is deprecated in CUPS but still passes documents
	// untouched, which lets the test compare bytes.
	e.run(t, tools["lpadmin"], "-h", e.server, "-p", rawQueue, "-v", e.ipp, "-m", "raw", "-E")
	return e
}

func (e *cupsEnv) write(t *testing.T, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(e.dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// start runs a daemon in the foreground as a child of the test and stops it
// by its pid at the end; it returns a function that reads its output so far.
func (e *cupsEnv) start(t *testing.T, name, bin string, args ...string) func() string {
	t.Helper()
	logPath := filepath.Join(e.dir, "log", name+".out")
	out, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env, cmd.Stdout, cmd.Stderr = e.env, out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); out.Close(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("%s output:\n%s", name, b)
		}
	})
	return func() string { b, _ := os.ReadFile(logPath); return string(b) }
}

// run runs a command with the environment's variables and fails on error.
func (e *cupsEnv) run(t *testing.T, bin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = e.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(bin), strings.Join(args, " "), err, out)
	}
	return string(out)
}

// ipptool runs ipptool's requests on uri and returns the attributes it
// displays as name → value.
func (e *cupsEnv) ipptool(t *testing.T, uri, test string) map[string]string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "request.test")
	if err := os.WriteFile(f, []byte(test), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(testtool.Require(t, "ipptool"), "-tv", uri, f)
	cmd.Env = e.env
	out, _ := cmd.CombinedOutput()
	attrs := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		// Lines read "        copies (integer) = 2".
		name, value, ok := strings.Cut(strings.TrimSpace(sc.Text()), " = ")
		if !ok {
			continue
		}
		if i := strings.Index(name, " ("); i > 0 {
			attrs[name[:i]] = value
		}
	}
	return attrs
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func dialable(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err == nil {
		c.Close()
	}
	return err == nil
}

// waitFor polls cond for up to 15 seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
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

func requireTool(t *testing.T, tool string) string { return testtool.Require(t, tool) }
