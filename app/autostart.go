package app

import (
	"errors"
	"fmt"
	"os"

	"github.com/cfe-agent/cfe-agent/autostart"
	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/profiles"
)

// AutostartName names the agent's autostart entry on every platform.
const AutostartName = "cfe-agent"

// SetAutostart turns the agent's per-user autostart entry on or off
// ("cfe-agent autostart", the tray's menu). The entry runs this executable
// (its resolved absolute path) with --autostart and the data directory,
// when one was chosen by flag or environment (the session that starts it
// has neither). When the installer enabled the agent for every user, the
// installer's command is not repeated in a per-user entry, but an entry
// with its own data directory is kept (or refused, naming both entries,
// where both would start); turning it off hides the installer's entry for
// this user where the desktop allows it (XDG), and otherwise says who can.
func SetAutostart(opts Options, on bool) error {
	if !on {
		err := autostart.Disable(AutostartName)
		if errors.Is(err, autostart.ErrMachineWide) {
			st, _ := autostart.Query(AutostartName)
			return &cfe.Error{Code: cfe.EINVALID, Op: "autostart", Err: err,
				Message: "el instalador activó el inicio con el sistema para todos los usuarios de este equipo (" + st.MachinePath +
					"), que este usuario no puede desactivar desde el agente: un administrador puede quitarlo borrando esa entrada o desinstalando el agente"}
		}
		return err
	}
	exe, err := executable()
	if err != nil {
		return fmt.Errorf("finding the agent's executable: %w", err)
	}
	// --autostart: at a login where another agent (the service) already runs
	// on the data directory, this start exits quietly.
	e := autostart.Entry{Name: AutostartName, DisplayName: "Agente CFE", Command: []string{exe, "--autostart"}}
	if opts.DataDir != "" || os.Getenv(profiles.EnvDataDir) != "" {
		dir, err := profiles.DataDir(opts.DataDir)
		if err != nil {
			return err
		}
		e.Command = append(e.Command, "--data-dir", dir)
		e.Custom = true
	}
	err = autostart.Enable(e)
	if errors.Is(err, autostart.ErrConflict) {
		st, _ := autostart.Query(AutostartName)
		return &cfe.Error{Code: cfe.EINVALID, Op: "autostart", Err: err,
			Message: "el instalador ya inicia el agente para todos los usuarios (" + st.MachinePath + ") con la carpeta de datos predeterminada; " +
				"una entrada de este usuario (" + st.UserPath + ") con la carpeta " + e.Command[len(e.Command)-1] +
				" iniciaría un segundo agente al mismo tiempo: use la carpeta predeterminada o pida a un administrador que quite la entrada del equipo"}
	}
	return err
}
