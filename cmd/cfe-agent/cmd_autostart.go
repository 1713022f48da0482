package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cfe-agent/cfe-agent/app"
	"github.com/cfe-agent/cfe-agent/autostart"
)

// autostartName names the agent's autostart entry (app.AutostartName).
const autostartName = app.AutostartName

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
			fmt.Fprintln(out, st.Describe())
			return nil
		},
	}
	return cmd
}

// setAutostart turns the agent's per-user autostart entry on or off
// (app.SetAutostart).
func setAutostart(opts app.Options, on bool) error { return app.SetAutostart(opts, on) }
