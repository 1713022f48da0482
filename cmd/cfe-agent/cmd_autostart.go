package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/cfe-agent/cfe-agent/autostart"
	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/profiles"
)

// autostartName names the agent's autostart entry on every platform.
const autostartName = "cfe-agent"

func newAutostartCommand(opts *globalOptions) *cobra.Command {
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
// entry runs this executable (its resolved absolute path) with the data
// directory, when one was chosen by flag or environment (the session that
// starts it has neither). When the installer enabled the agent for every
// user, no per-user entry is added, and turning it off says why it cannot.
func setAutostart(opts globalOptions, on bool) error {
	if !on {
		err := autostart.Disable(autostartName)
		if errors.Is(err, autostart.ErrMachineWide) {
			return &cfe.Error{Code: cfe.EINVALID, Op: "autostart", Err: err,
				Message: "el instalador activó el inicio con el sistema para todos los usuarios de este equipo; solo un administrador puede quitarlo (desinstalando el agente o borrando la entrada del equipo)"}
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
	command := []string{exe}
	if opts.dataDir != "" || os.Getenv(profiles.EnvDataDir) != "" {
		dir, err := profiles.DataDir(opts.dataDir)
		if err != nil {
			return err
		}
		command = append(command, "--data-dir", dir)
	}
	return autostart.Enable(autostart.Entry{Name: autostartName, DisplayName: "Agente CFE", Command: command})
}
