package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/cfe-agent/cfe-agent/app"
	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/tray"
)

// One agent runs per data directory. The first start takes an instance lock
// (an flock'd file run/agent.lock on Linux and macOS, a named mutex on
// Windows) and holds it until it exits; it writes its process id to
// run/agent.pid. A second start of the tray agent for the same directory does
// not fail: it opens the running agent's status page (the base URL of the run
// file the running agent wrote) and exits 0; started by an autostart entry
// (--autostart: at each login, maybe on a machine whose service runs on the
// same directory) it exits 0 without opening anything. A second "serve" (or
// --headless) start refuses with a clear error. One-shot commands take no
// lock.

// instanceWait bounds how long a second start waits for the running agent to
// say where it serves (it may still be opening its store).
const instanceWait = 15 * time.Second

// errInstanceHeld is what lockInstance reports when another agent holds the
// data directory's lock.
var errInstanceHeld = errors.New("another agent holds the data directory")

func instancePIDPath(dataDir string) string { return filepath.Join(dataDir, "run", "agent.pid") }

// singleInstance takes the data directory's instance lock. It returns the
// function that releases it, or a nil function and a nil error when another
// agent holds it and this (tray) start opened that agent's status page, or,
// autostarted, just said so on out: the caller then exits 0.
func singleInstance(ctx context.Context, out io.Writer, dataDir string, headless, autostarted bool) (func(), error) {
	if err := os.MkdirAll(filepath.Join(dataDir, "run"), 0o700); err != nil {
		return nil, err
	}
	release, err := lockInstance(dataDir)
	if err == nil {
		if werr := os.WriteFile(instancePIDPath(dataDir), []byte(strconv.Itoa(os.Getpid())), 0o600); werr != nil {
			release()
			return nil, werr
		}
		return release, nil
	}
	if !errors.Is(err, errInstanceHeld) {
		return nil, fmt.Errorf("taking the instance lock of %s: %w", dataDir, err)
	}
	if autostarted && !headless {
		fmt.Fprintf(out, "El agente CFE ya está funcionando con estos datos (carpeta %s): el inicio con la sesión termina sin abrir nada\n", dataDir)
		return nil, nil
	}
	info, found := runningInstance(ctx, dataDir)
	if headless || !found {
		msg := "ya hay un agente ejecutándose con estos datos (carpeta " + dataDir
		if found {
			msg += fmt.Sprintf(", proceso %d, %s", info.PID, info.BaseURL)
		}
		return nil, &cfe.Error{Code: cfe.EUNAVAILABLE, Op: "agent.instance", Err: err, Message: msg + "): deténgalo antes de iniciar otro"}
	}
	fmt.Fprintf(out, "El agente CFE ya está funcionando (proceso %d): se abre su página de estado, %s/\n", info.PID, info.BaseURL)
	if err := tray.OpenDefault(info.BaseURL + "/"); err != nil {
		return nil, fmt.Errorf("no se pudo abrir la página de estado %s/: %w", info.BaseURL, err)
	}
	return nil, nil
}

// runningInstance finds the run file of the agent holding the lock: the one
// whose process id is in run/agent.pid. It waits up to instanceWait for it.
func runningInstance(ctx context.Context, dataDir string) (app.RunInfo, bool) {
	ctx, cancel := context.WithTimeout(ctx, instanceWait)
	defer cancel()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		if info, ok := runFileOfPID(dataDir); ok {
			return info, true
		}
		select {
		case <-ctx.Done():
			return app.RunInfo{}, false
		case <-tick.C:
		}
	}
}

// runFileOfPID returns the run file written by the process named in
// run/agent.pid.
func runFileOfPID(dataDir string) (app.RunInfo, bool) {
	b, err := os.ReadFile(instancePIDPath(dataDir))
	if err != nil {
		return app.RunInfo{}, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return app.RunInfo{}, false
	}
	files, _ := filepath.Glob(filepath.Join(dataDir, "run", "*.json"))
	for _, f := range files {
		var info app.RunInfo
		if b, err := os.ReadFile(f); err == nil && json.Unmarshal(b, &info) == nil && info.PID == pid && info.BaseURL != "" {
			return info, true
		}
	}
	return app.RunInfo{}, false
}
