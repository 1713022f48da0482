// Package instance keeps one agent per data directory. The first start takes
// the directory's instance lock (an flock'd file run/agent.lock on Linux and
// macOS, a named mutex in the Global namespace on Windows, so that the
// service and a cashier's tray agent exclude each other) and holds it until
// it exits; it writes its process id to run/agent.pid. The lock goes with the
// process: a crashed agent leaves no stale lock.
//
// A second start of the tray agent for the same directory does not fail: it
// opens the running agent's status page (where it serves comes from the
// caller's Locate, which reads the running agent's run file) and has nothing
// else to do; started by an autostart entry (at each login, maybe on a
// machine whose service runs on the same directory) it only says so. A
// second headless start ("serve", the service) refuses with a clear error.
// One-shot commands take no lock.
package instance

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// DefaultWait bounds how long a second start waits for the running agent to
// say where it serves (it may still be opening its store).
const DefaultWait = 15 * time.Second

// ErrHeld is what Lock reports when another agent holds the data
// directory's lock.
var ErrHeld = errors.New("another agent holds the data directory")

// PIDPath is the file where the agent holding dataDir's lock writes its
// process id.
func PIDPath(dataDir string) string { return filepath.Join(dataDir, "run", "agent.pid") }

// Start describes a start of the agent on a data directory.
type Start struct {
	DataDir string
	// Out receives the line that tells a second tray start what it did.
	Out io.Writer
	// Headless is a start without the tray ("serve", the service): it
	// refuses when another agent holds the directory.
	Headless bool
	// Autostarted is a tray start by the session's autostart entry: it
	// opens nothing when another agent holds the directory.
	Autostarted bool
	// Locate finds where the agent of process pid serves its module (its
	// base URL, such as http://127.0.0.1:18787), from the run file it wrote;
	// false while it has written none.
	Locate func(pid int) (baseURL string, ok bool)
	// Open shows url in the user's browser (tray.OpenDefault); a tray
	// start that is not autostarted needs it.
	Open func(url string) error
	// Wait bounds how long Locate is retried; DefaultWait when zero.
	Wait time.Duration
}

// Take takes the data directory's instance lock and writes this process's id
// to PIDPath. It returns the function that releases the lock, or a nil
// function and a nil error when another agent holds it and this (tray)
// start opened that agent's status page or, autostarted, just said so on
// Out: the caller then exits 0. A headless start on a held directory, or a
// tray start that cannot find where the holder serves, is refused with an
// EUNAVAILABLE error naming the directory (and the holder, when known).
func Take(ctx context.Context, s Start) (func(), error) {
	if err := os.MkdirAll(filepath.Join(s.DataDir, "run"), 0o700); err != nil {
		return nil, err
	}
	release, err := Lock(s.DataDir)
	if err == nil {
		if werr := os.WriteFile(PIDPath(s.DataDir), []byte(strconv.Itoa(os.Getpid())), 0o600); werr != nil {
			release()
			return nil, werr
		}
		return release, nil
	}
	if !errors.Is(err, ErrHeld) {
		return nil, fmt.Errorf("taking the instance lock of %s: %w", s.DataDir, err)
	}
	if s.Autostarted && !s.Headless {
		fmt.Fprintf(s.Out, "El agente CFE ya está funcionando con estos datos (carpeta %s): el inicio con la sesión termina sin abrir nada\n", s.DataDir)
		return nil, nil
	}
	pid, baseURL, found := s.running(ctx)
	if s.Headless || !found {
		msg := "ya hay un agente ejecutándose con estos datos (carpeta " + s.DataDir
		if found {
			msg += fmt.Sprintf(", proceso %d, %s", pid, baseURL)
		}
		return nil, &cfe.Error{Code: cfe.EUNAVAILABLE, Op: "agent.instance", Err: err, Message: msg + "): deténgalo antes de iniciar otro"}
	}
	fmt.Fprintf(s.Out, "El agente CFE ya está funcionando (proceso %d): se abre su página de estado, %s/\n", pid, baseURL)
	if s.Open == nil {
		return nil, fmt.Errorf("no se pudo abrir la página de estado %s/: no hay con qué abrirla", baseURL)
	}
	if err := s.Open(baseURL + "/"); err != nil {
		return nil, fmt.Errorf("no se pudo abrir la página de estado %s/: %w", baseURL, err)
	}
	return nil, nil
}

// running finds where the agent holding the lock serves: the process named
// in PIDPath, as Locate finds it. It waits up to Wait for both.
func (s Start) running(ctx context.Context) (pid int, baseURL string, ok bool) {
	wait := s.Wait
	if wait <= 0 {
		wait = DefaultWait
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		if pid, ok := holderPID(s.DataDir); ok && s.Locate != nil {
			if baseURL, ok := s.Locate(pid); ok {
				return pid, baseURL, true
			}
		}
		select {
		case <-ctx.Done():
			return 0, "", false
		case <-tick.C:
		}
	}
}

// holderPID reads the process id the lock's holder wrote.
func holderPID(dataDir string) (int, bool) {
	b, err := os.ReadFile(PIDPath(dataDir))
	if err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid, err == nil
}
