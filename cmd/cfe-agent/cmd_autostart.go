package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cfe-agent/cfe-agent/app"
	"github.com/cfe-agent/cfe-agent/autostart"
)

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
				if err := app.SetAutostart(*opts, args[0] == "enable"); err != nil {
					return err
				}
			case "status":
			default:
				return fmt.Errorf("acción desconocida %q: use enable, disable o status", args[0])
			}
			st, err := autostart.Query(app.AutostartName)
			if err != nil {
				return err
			}
			fmt.Fprintln(out, st.Describe())
			return nil
		},
	}
	return cmd
}
