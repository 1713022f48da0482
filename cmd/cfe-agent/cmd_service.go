package main

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/cfe-agent/cfe-agent/app"
	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/service"
)

// serviceOptions are the flags of "service install" and "service unit".
type serviceOptions struct {
	user string // --usuario: the Linux user that runs the service
	exe  string // --ejecutable (service unit): the executable the unit runs
}

func newServiceCommand(opts *app.Options) *cobra.Command {
	var so serviceOptions
	cmd := &cobra.Command{
		Use:   "service",
		Short: "Instala y controla el agente como servicio del sistema (equipos sin cajero conectado)",
		Long: "Ejecuta el agente sin ícono de bandeja como servicio del sistema: un servicio de Windows o una unidad " +
			"de systemd en Linux. El servicio usa la carpeta de datos que se resuelve al instalarlo (--data-dir, si " +
			"no $CFE_AGENT_DATA_DIR, si no la del usuario que instala), así el servicio y la línea de comandos del " +
			"técnico ven los mismos datos. Instalar, desinstalar, iniciar y detener requieren administrador (root).",
	}
	install := &cobra.Command{
		Use:   "install",
		Short: "Instala el servicio, lo habilita al arrancar el equipo y lo inicia",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := app.ServiceConfig(*opts, so.user, so.exe, true)
			if err != nil {
				return err
			}
			if err := app.CheckServiceDataDir(c.DataDir); err != nil {
				return err
			}
			if err := service.Install(c); err != nil {
				return app.ServiceError("instalar", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "servicio %s instalado e iniciado\ncarpeta de datos: %s\nregistro: %s\n",
				app.ServiceName, c.DataDir, filepath.Join(c.DataDir, "logs"))
			return nil
		},
	}
	install.Flags().StringVar(&so.user, "usuario", "", "`USUARIO` de Linux que ejecuta el servicio (si no se indica: el que usó sudo)")
	unit := &cobra.Command{
		Use:   "unit",
		Short: "Muestra la unidad de systemd del servicio sin instalarla",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := app.ServiceConfig(*opts, so.user, so.exe, false)
			if err != nil {
				return err
			}
			b, err := service.SystemdUnit(c)
			if err != nil {
				return cfe.Errorf(cfe.EINVALID, "no se puede escribir la unidad: %v", err)
			}
			_, err = cmd.OutOrStdout().Write(b)
			return err
		},
	}
	unit.Flags().StringVar(&so.user, "usuario", "", "`USUARIO` de Linux que ejecuta el servicio (si no se indica: el que usó sudo, o el actual)")
	unit.Flags().StringVar(&so.exe, "ejecutable", "", "`RUTA` absoluta del ejecutable (si no se indica: este)")

	control := func(use, short, verb, done string, op func(string) error) *cobra.Command {
		return &cobra.Command{
			Use:   use,
			Short: short,
			Args:  cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				if err := op(app.ServiceName); err != nil {
					return app.ServiceError(verb, err)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "servicio %s %s\n", app.ServiceName, done)
				return nil
			},
		}
	}
	status := &cobra.Command{
		Use:   "status",
		Short: "Dice si el servicio está instalado, en ejecución y habilitado al arrancar",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := service.Query(app.ServiceName)
			if err != nil {
				return app.ServiceError("consultar", err)
			}
			fmt.Fprintln(cmd.OutOrStdout(), st.Describe(app.ServiceName))
			return nil
		},
	}
	cmd.AddCommand(install,
		control("uninstall", "Detiene y quita el servicio (la carpeta de datos queda)", "desinstalar", "desinstalado (los datos quedan)", service.Uninstall),
		control("start", "Inicia el servicio instalado", "iniciar", "iniciado", app.StartService),
		control("stop", "Detiene el servicio instalado", "detener", "detenido", service.Stop),
		status, unit)
	return cmd
}
