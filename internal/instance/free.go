package instance

import (
	"errors"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// FreeForService refuses when another agent holds dataDir's instance lock:
// a service started on it would stop at once (a tray agent has it, most
// likely the installing user's, started at login). It takes the lock only
// to see that it is free, and releases it; any other error taking it is the
// service's to report, so it is not returned.
func FreeForService(dataDir string) error {
	release, err := Lock(dataDir)
	if errors.Is(err, ErrHeld) {
		return &cfe.Error{Code: cfe.EUNAVAILABLE, Op: "service", Err: err,
			Message: "otro agente CFE usa la carpeta de datos del servicio (" + dataDir + "): cierre el agente de la " +
				"bandeja («Salir» en el menú de su ícono) antes de iniciar el servicio"}
	}
	if err == nil {
		release()
	}
	return nil
}
