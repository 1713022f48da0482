package main

import (
	"fmt"
	"sort"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/cfe-agent/cfe-agent/app"
	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/profiles"
)

func newProfileCommand(opts *app.Options) *cobra.Command {
	cmd := &cobra.Command{Use: "profile", Short: "Perfiles de configuración (empresa y entorno)"}
	cmd.AddCommand(&cobra.Command{
		Use:   "list",
		Short: "Lista los perfiles; el activo lleva *",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, cfg, _, err := app.LoadConfig(*opts)
			if err != nil {
				return err
			}
			names := make([]string, 0, len(cfg.Profiles))
			for n := range cfg.Profiles {
				names = append(names, n)
			}
			sort.Strings(names)
			for _, n := range names {
				mark := " "
				if n == cfg.Active {
					mark = "*"
				}
				p := cfg.Profiles[n]
				fmt.Fprintf(cmd.OutOrStdout(), "%s %-16s %-10s RUC %s  %s  escucha en %s\n", mark, n, p.Environment,
					p.Company.RUC, p.Company.RazonSocial, p.Listen)
			}
			return nil
		},
	}, &cobra.Command{
		Use:   "show [NAME]",
		Short: "Muestra un perfil (el activo si no se indica) sin secretos",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, cfg, _, err := app.LoadConfig(*opts)
			if err != nil {
				return err
			}
			name := cfg.Active
			if len(args) == 1 {
				name = args[0]
			}
			p, ok := profiles.Redacted(cfg).Profile(name)
			if !ok {
				return cfe.Errorf(cfe.ENOTFOUND, "el perfil %q no existe", name)
			}
			out, err := yaml.Marshal(map[string]profiles.Profile{name: p})
			if err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(out)
			return err
		},
	}, &cobra.Command{
		Use:   "use NAME",
		Short: "Activa el perfil NAME",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dataDir, err := profiles.DataDir(opts.DataDir)
			if err != nil {
				return err
			}
			if err := profiles.Use(dataDir, args[0]); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "perfil activo: %s\n", args[0])
			return nil
		},
	}, newProfileAddCommand(opts))
	return cmd
}
