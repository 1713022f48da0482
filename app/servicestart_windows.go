package app

import (
	"errors"
	"path/filepath"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/instance"
	"github.com/cfe-agent/cfe-agent/service"
)

// StartService starts the installed service ("cfe-agent service start").
// While the service is stopped it first checks its data directory's
// instance lock: held, a tray agent (most likely the installing user's,
// started at login) has the directory, and the service would stop at once;
// the error says so instead. A start that fails names where the reason is:
// the Windows Event Log (the service's source, written when the agent
// cannot even open its log) and the agent's log.
func StartService(name string) error {
	dataDir, err := service.InstalledDataDir(name)
	if err != nil {
		return err
	}
	if st, err := service.Query(name); err == nil && !st.Running {
		if err := instance.FreeForService(dataDir); err != nil {
			return err
		}
	}
	err = service.Start(name)
	if errors.Is(err, service.ErrStartFailed) {
		return &cfe.Error{Code: cfe.EUNAVAILABLE, Op: "service", Err: err,
			Message: "el servicio " + name + " se detuvo al iniciarse: el motivo está en el Visor de eventos (Registros de " +
				"Windows > Aplicación, origen " + name + ") y en el registro del agente, " +
				filepath.Join(dataDir, "logs", "cfe-agent.log")}
	}
	return err
}

// CheckServiceDataDir is "service install"'s check before it installs and
// starts the service on dataDir: no other agent may hold it.
func CheckServiceDataDir(dataDir string) error { return instance.FreeForService(dataDir) }
