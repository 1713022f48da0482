package main_test

import (
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/internal/testtool"
)

// notifySocket is a unixgram socket standing for systemd's: the agent under
// test sends its sd_notify(3) states there ($NOTIFY_SOCKET).
type notifySocket struct {
	path   string
	states chan string
}

func listenNotify(t *testing.T) *notifySocket {
	t.Helper()
	// A short path: a socket's name has at most 107 bytes.
	dir, err := os.MkdirTemp("", "sdn")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	n := &notifySocket{path: filepath.Join(dir, "notify"), states: make(chan string, 16)}
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: n.path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	go func() {
		buf := make([]byte, 4096)
		for {
			k, err := conn.Read(buf)
			if err != nil {
				close(n.states)
				return
			}
			n.states <- string(buf[:k])
		}
	}()
	return n
}

// next waits for the next state the agent sends.
func (n *notifySocket) next(t *testing.T, what string) string {
	t.Helper()
	select {
	case s := <-n.states:
		return s
	case <-time.After(30 * time.Second):
		t.Fatalf("the agent sent no %s within 30 s", what)
		return ""
	}
}

// listeningAtRE is listeningRE with the record's time.
var listeningAtRE = regexp.MustCompile(`time=(\S+) level=INFO msg="cfe-agent listening" base_url=(\S+)`)

// TestAgent_SystemdNotify: under a Type=notify unit the agent sends READY=1
// only once the local module serves (its "listening" line is logged and
// /health answers at that moment), STOPPING=1 when SIGTERM stops it, and
// nothing when its start fails (the port is held), so "systemctl start"
// reports the failure instead of a service that is not there.
func TestAgent_SystemdNotify(t *testing.T) {
	t.Parallel()
	t.Run("ready once serving, stopping at stop", func(t *testing.T) {
		t.Parallel()
		n := listenNotify(t)
		env := procEnv(t, t.TempDir(), "NOTIFY_SOCKET="+n.path)
		stderr := &syncBuffer{}
		cmd := exec.Command(agentBinary(t), "serve", "--listen", "127.0.0.1:0")
		cmd.Env, cmd.Stderr = env, stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		t.Cleanup(func() {
			if cmd.ProcessState == nil {
				cmd.Process.Kill()
				<-done
			}
			if t.Failed() {
				t.Logf("agent stderr:\n%s", stderr.String())
			}
		})

		if s := n.next(t, "READY=1"); s != "READY=1" {
			t.Fatalf("the first state sent is %q, want READY=1", s)
		}
		readyAt := time.Now()
		// At READY=1 the agent already serves: it logged where it listens
		// before. The line may reach this process after the datagram (it
		// comes through a pipe that exec copies): wait for it, then compare
		// the time the agent logged it with the time READY=1 arrived.
		var m []string
		if !testtool.WaitUntil(t, 10*time.Second, func() bool {
			m = listeningAtRE.FindStringSubmatch(stderr.String())
			return m != nil
		}) {
			t.Fatalf("the agent never logged where it listens:\n%s", stderr.String())
		}
		logged, err := time.Parse(time.RFC3339Nano, m[1])
		if err != nil {
			t.Fatalf("the listening line's time %q: %v", m[1], err)
		}
		if logged.After(readyAt) {
			t.Fatalf("READY=1 arrived at %s, before the agent logged where it listens (%s):\n%s",
				readyAt.Format(time.RFC3339Nano), m[1], stderr.String())
		}
		m = m[1:]
		resp, err := http.Get(m[1] + "/health")
		if err != nil {
			t.Fatalf("READY=1 sent but /health does not answer: %v", err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("READY=1 sent but /health answers %d", resp.StatusCode)
		}

		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if s := n.next(t, "STOPPING=1"); s != "STOPPING=1" {
			t.Fatalf("the state sent at SIGTERM is %q, want STOPPING=1", s)
		}
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("the agent did not exit cleanly: %v", err)
			}
		case <-time.After(15 * time.Second):
			t.Fatal("the agent did not exit within 15 s of SIGTERM")
		}
	})

	t.Run("failed start sends nothing", func(t *testing.T) {
		t.Parallel()
		held, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer held.Close()
		n := listenNotify(t)
		env := procEnv(t, t.TempDir(), "NOTIFY_SOCKET="+n.path)
		cmd := exec.Command(agentBinary(t), "serve", "--listen", held.Addr().String())
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err == nil {
			t.Fatalf("the agent started on a held port:\n%s", out)
		}
		select {
		case s := <-n.states:
			t.Fatalf("a failed start sent %q:\n%s", s, out)
		case <-time.After(200 * time.Millisecond):
		}
		if !strings.Contains(string(out), held.Addr().String()) {
			t.Errorf("the failure does not name the held address:\n%s", out)
		}
	})
}
