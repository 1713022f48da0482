package service

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// listenNotify is a unixgram socket standing for systemd's
// ($NOTIFY_SOCKET); it returns the states sent to it.
func listenNotify(t *testing.T) <-chan string {
	t.Helper()
	// A short path: a socket's name has at most 107 bytes.
	dir, err := os.MkdirTemp("", "sdn")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	path := filepath.Join(dir, "notify")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	t.Setenv("NOTIFY_SOCKET", path)
	states := make(chan string, 4)
	go func() {
		buf := make([]byte, 512)
		for {
			n, err := conn.Read(buf)
			if err != nil {
				close(states)
				return
			}
			states <- string(buf[:n])
		}
	}()
	return states
}

func next(t *testing.T, states <-chan string) string {
	t.Helper()
	select {
	case s := <-states:
		return s
	case <-time.After(10 * time.Second):
		t.Fatal("nothing was sent to the notification socket within 10 s")
		return ""
	}
}

// TestSignalReady_systemd: under a Type=notify unit SignalReady sends
// READY=1 and calls the ready function the context carries (the Windows
// service's, here any), and SignalStopping sends STOPPING=1. It sets
// NOTIFY_SOCKET, so it does not run in parallel.
func TestSignalReady_systemd(t *testing.T) {
	states := listenNotify(t)
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	called := 0
	SignalReady(WithReady(context.Background(), func() { called++ }), log)
	if s := next(t, states); s != "READY=1" {
		t.Errorf("SignalReady sent %q, want READY=1", s)
	}
	if called != 1 {
		t.Errorf("the context's ready function was called %d times, want once", called)
	}
	SignalStopping(log)
	if s := next(t, states); s != "STOPPING=1" {
		t.Errorf("SignalStopping sent %q, want STOPPING=1", s)
	}
	if logs.Len() > 0 {
		t.Errorf("notifications that succeeded were logged:\n%s", logs.String())
	}
}

// TestSignalReady_failure: a notification socket that is gone is logged as
// a warning, and the ready function is still called.
func TestSignalReady_failure(t *testing.T) {
	t.Setenv("NOTIFY_SOCKET", filepath.Join(t.TempDir(), "no-such-socket"))
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	called := false
	SignalReady(WithReady(context.Background(), func() { called = true }), log)
	SignalStopping(log)
	if !called {
		t.Error("the context's ready function was not called")
	}
	for _, want := range []string{"could not tell systemd the agent is ready", "could not tell systemd the agent is stopping"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the log lacks %q:\n%s", want, logs.String())
		}
	}
}

// TestSignalReady_noSystemd: started by anything but systemd (no
// NOTIFY_SOCKET) nothing is sent, nothing is logged, and a context without a
// ready function is no error.
func TestSignalReady_noSystemd(t *testing.T) {
	t.Setenv("NOTIFY_SOCKET", "") // restored at the end
	if err := os.Unsetenv("NOTIFY_SOCKET"); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	SignalReady(context.Background(), log)
	SignalStopping(log)
	if logs.Len() > 0 {
		t.Errorf("logged without systemd:\n%s", logs.String())
	}
}
