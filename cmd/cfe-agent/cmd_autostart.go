package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/cfe-agent/cfe-agent/autostart"
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
			on, err := autostart.Enabled(autostartName)
			if err != nil {
				return err
			}
			where, _ := autostart.Path(autostartName)
			if on {
				fmt.Fprintln(out, "inicio con el sistema: activado ("+where+")")
			} else {
				fmt.Fprintln(out, "inicio con el sistema: desactivado")
			}
			return nil
		},
	}
	return cmd
}

// setAutostart turns the agent's autostart entry on or off. The entry runs
// this executable with the data directory it was given, if any.
func setAutostart(opts globalOptions, on bool) error {
	if !on {
		return autostart.Disable(autostartName)
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding the agent's executable: %w", err)
	}
	if resolved, err := filepath.EvalSymlinks(exe); err == nil {
		exe = resolved
	}
	command := []string{exe}
	if opts.dataDir != "" {
		dir, err := filepath.Abs(opts.dataDir)
		if err != nil {
			return err
		}
		command = append(command, "--data-dir", dir)
	}
	return autostart.Enable(autostart.Entry{Name: autostartName, DisplayName: "Agente CFE", Command: command})
}
