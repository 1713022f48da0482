package app

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/store"
)

// How to stop the agent that holds a data directory, for the commands that
// need it stopped (cae import, cae used-elsewhere, envelope, archive,
// restore): the exact step for the way it runs — the tray's Salir, the
// systemd unit (the user's or the system's), the Windows service, or the
// console it was started from — read from the running process (its run
// file's PID: on Linux its cgroup names the systemd unit and its command
// line says whether it is the tray or "serve"; on Windows the service
// manager says whether the agent's service runs).

// agentRun is how a running agent was started, as stopHint reads it.
type agentRun struct {
	// unit is the systemd unit that runs it ("cfe-agent.service"), and
	// userUnit says it is one of the user's manager (systemctl --user).
	unit     string
	userUnit bool
	// windowsService: the Windows service runs it.
	windowsService bool
	// headless: started with serve or --headless (a console or a script),
	// not as the tray.
	headless bool
	known    bool // the process could be read at all
}

// stopHint is the Spanish sentence that tells how to stop the agent of
// pid, given how it runs.
func stopHint(pid int, r agentRun) string {
	switch {
	case r.unit != "" && r.userUnit:
		return fmt.Sprintf("deténgalo con «systemctl --user stop %s»", r.unit)
	case r.unit != "":
		return fmt.Sprintf("deténgalo con «sudo systemctl stop %s»", r.unit)
	case r.windowsService:
		return "deténgalo con «cfe-agent service stop» (en una consola de administrador), o desde Servicios: «" + ServiceName + "» → Detener"
	case r.known && r.headless:
		return fmt.Sprintf("deténgalo con Ctrl+C en la consola donde se ejecuta, o con «kill %d»", pid)
	case r.known:
		return fmt.Sprintf("ciérrelo desde el ícono de la bandeja: menú → «Salir» (o «kill %d»)", pid)
	}
	return fmt.Sprintf("ciérrelo desde el ícono de la bandeja (menú → «Salir»), o detenga su servicio "+
		"(«cfe-agent service stop», «sudo systemctl stop %s»), o el proceso %d", ServiceName, pid)
}

// withStopHint adds to Open's refusal because an agent runs on the data
// directory how to stop that agent; other errors are returned as they are.
func withStopHint(err error, dataDir, profile string) error {
	if !store.IsRunning(err) {
		return err
	}
	var ce *cfe.Error
	msg := "ya hay un agente ejecutándose con estos datos"
	if errors.As(err, &ce) && ce.Message != "" {
		msg = ce.Message
	}
	hint := "deténgalo (ícono de la bandeja → «Salir», o su servicio) y vuelva a ejecutar este comando"
	if info, ok := ReadRunFile(dataDir, profile); ok && info.PID > 0 {
		hint = stopHint(info.PID, readAgentRun(info.PID, dataDir)) + "; luego vuelva a ejecutar este comando y reinicie el agente"
	}
	return &cfe.Error{Code: cfe.EUNAVAILABLE, Op: "app.Open", Err: err,
		Message: msg + ": este comando necesita el agente detenido. " + strings.ToUpper(hint[:1]) + hint[1:]}
}

// unitOfCgroup returns the systemd service of a /proc/PID/cgroup's content
// ("0::/system.slice/cfe-agent.service", or under user@UID.service for the
// user's manager); "" when the process runs in no service (a scope of the
// desktop session, a terminal).
func unitOfCgroup(content string) (unit string, user bool) {
	for _, line := range strings.Split(content, "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 || (parts[0] != "0" && !strings.Contains(parts[1], "name=systemd")) {
			continue
		}
		path := strings.TrimSpace(parts[2])
		base := filepath.Base(path)
		if !strings.HasSuffix(base, ".service") {
			continue
		}
		return base, strings.Contains(path, "/user@")
	}
	return "", false
}

// headlessArgs reports whether an agent's command line asks for no tray.
func headlessArgs(args []string) bool {
	for _, a := range args[min(1, len(args)):] {
		if a == "serve" || a == "--headless" || a == "--headless=true" {
			return true
		}
	}
	return false
}
