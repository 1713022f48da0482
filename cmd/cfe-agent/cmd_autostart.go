package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/cfe-agent/cfe-agent/app"
	"github.com/cfe-agent/cfe-agent/autostart"
	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/profiles"
)

// autostartName names the agent's autostart entry on every platform.
const autostartName = "cfe-agent"

func newAutostartCommand(opts *app.Options) *cobra.Command {
	cmd := &cobra.Command{
		Use:       "autostart enable|disable|status",
		Short:     "Inicia (o no) el agente al iniciar la sesión del usuario",
		Args:      cobra.ExactArgs(1),
		ValidArgs: []string{"enable", "disable", "status"},
		RunE: func(cmd *cobra.Command, args []string) error {
			out := cmd.OutOrStdout()
			switch args[0] {
			case "enable", "disable":
				if err := setAutostart(*opts, args[0] == "enable"); err != nil {
					return err
				}
			case "status":
			default:
				return fmt.Errorf("acción desconocida %q: use enable, disable o status", args[0])
			}
			st, err := autostart.Query(autostartName)
			if err != nil {
				return err
			}
			switch {
			case st.Machine && st.Hidden:
				fmt.Fprintln(out, "inicio con el sistema: desactivado para este usuario ("+st.UserPath+" oculta la entrada del instalador, "+st.MachinePath+")")
			case st.Replaced:
				fmt.Fprintln(out, "inicio con el sistema: activado para este usuario ("+st.UserPath+"), en lugar de la entrada del instalador ("+st.MachinePath+")")
			case st.Machine && st.User:
				fmt.Fprintln(out, "inicio con el sistema: activado para todos los usuarios por el instalador ("+st.MachinePath+") y también para este usuario ("+st.UserPath+")")
			case st.Machine:
				fmt.Fprintln(out, "inicio con el sistema: activado para todos los usuarios por el instalador ("+st.MachinePath+")")
			case st.User:
				fmt.Fprintln(out, "inicio con el sistema: activado ("+st.UserPath+")")
			default:
				fmt.Fprintln(out, "inicio con el sistema: desactivado")
			}
			return nil
		},
	}
	return cmd
}

// setAutostart turns the agent's per-user autostart entry on or off. The
// entry runs this executable (its resolved absolute path) with --autostart
// and the data
// directory, when one was chosen by flag or environment (the session that
// starts it has neither). When the installer enabled the agent for every
// user, the installer's command is not repeated in a per-user entry, but an
// entry with its own data directory is kept (or refused, naming both
// entries, where both would start); turning it off hides the installer's
// entry for this user where the desktop allows it (XDG), and otherwise says
// who can.
func setAutostart(opts app.Options, on bool) error {
	if !on {
		err := autostart.Disable(autostartName)
		if errors.Is(err, autostart.ErrMachineWide) {
			st, _ := autostart.Query(autostartName)
			return &cfe.Error{Code: cfe.EINVALID, Op: "autostart", Err: err,
				Message: "el instalador activó el inicio con el sistema para todos los usuarios de este equipo (" + st.MachinePath +
					"), que este usuario no puede desactivar desde el agente: un administrador puede quitarlo borrando esa entrada o desinstalando el agente"}
		}
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding the agent's executable: %w", err)
	}
	if resolved, err := filepath.EvalSymlinks(exe); err == nil {
		exe = resolved
	}
	if exe, err = filepath.Abs(exe); err != nil {
		return err
	}
	// --autostart: at a login where another agent (the service) already runs
	// on the data directory, this start exits quietly.
	e := autostart.Entry{Name: autostartName, DisplayName: "Agente CFE", Command: []string{exe, "--autostart"}}
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
		st, _ := autostart.Query(autostartName)
		return &cfe.Error{Code: cfe.EINVALID, Op: "autostart", Err: err,
			Message: "el instalador ya inicia el agente para todos los usuarios (" + st.MachinePath + ") con la carpeta de datos predeterminada; " +
				"una entrada de este usuario (" + st.UserPath + ") con la carpeta " + e.Command[len(e.Command)-1] +
				" iniciaría un segundo agente al mismo tiempo: use la carpeta predeterminada o pida a un administrador que quite la entrada del equipo"}
	}
	return err
}
