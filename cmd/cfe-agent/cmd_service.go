package main

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cfe-agent/cfe-agent/app"
	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/profiles"
	"github.com/cfe-agent/cfe-agent/service"
)

// serviceName names the agent's service: the systemd unit
// cfe-agent.service, the Windows service cfe-agent.
const serviceName = "cfe-agent"

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
			c, err := serviceConfig(*opts, so, true)
			if err != nil {
				return err
			}
			if err := checkServiceDataDir(c.DataDir); err != nil {
				return err
			}
			if err := service.Install(c); err != nil {
				return serviceError("instalar", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "servicio %s instalado e iniciado\ncarpeta de datos: %s\nregistro: %s\n",
				serviceName, c.DataDir, filepath.Join(c.DataDir, "logs"))
			return nil
		},
	}
	install.Flags().StringVar(&so.user, "usuario", "", "`USUARIO` de Linux que ejecuta el servicio (si no se indica: el que usó sudo)")
	unit := &cobra.Command{
		Use:   "unit",
		Short: "Muestra la unidad de systemd del servicio sin instalarla",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := serviceConfig(*opts, so, false)
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
				if err := op(serviceName); err != nil {
					return serviceError(verb, err)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "servicio %s %s\n", serviceName, done)
				return nil
			},
		}
	}
	status := &cobra.Command{
		Use:   "status",
		Short: "Dice si el servicio está instalado, en ejecución y habilitado al arrancar",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := service.Query(serviceName)
			if err != nil {
				return serviceError("consultar", err)
			}
			fmt.Fprintln(cmd.OutOrStdout(), describeService(st))
			return nil
		},
	}
	cmd.AddCommand(install,
		control("uninstall", "Detiene y quita el servicio (la carpeta de datos queda)", "desinstalar", "desinstalado (los datos quedan)", service.Uninstall),
		control("start", "Inicia el servicio instalado", "iniciar", "iniciado", startService),
		control("stop", "Detiene el servicio instalado", "detener", "detenido", service.Stop),
		status, unit)
	return cmd
}

// describeService is the status line of the service.
func describeService(st service.State) string {
	if !st.Installed {
		return "servicio " + serviceName + ": no instalado"
	}
	s := "servicio " + serviceName + ": instalado, "
	if st.Running {
		s += "en ejecución"
	} else {
		s += "no está en ejecución"
	}
	s += " (" + st.Detail + "), "
	if st.Packaged {
		s = strings.Replace(s, "instalado, ", "instalado por el paquete ("+st.Unit+"), ", 1)
	}
	if st.Enabled {
		return s + "se inicia al arrancar el equipo"
	}
	return s + "no se inicia al arrancar el equipo"
}

// serviceError says in Spanish why a service operation failed.
func serviceError(verb string, err error) error {
	var said *cfe.Error
	switch {
	case errors.As(err, &said) && said.Op == "service":
		return err // already says it (startService)
	case errors.Is(err, service.ErrNotAdmin):
		how := "ejecútelo con sudo"
		if runtime.GOOS == "windows" {
			how = "abra la consola con «Ejecutar como administrador»"
		}
		return &cfe.Error{Code: cfe.EINVALID, Op: "service", Err: err,
			Message: "para " + verb + " el servicio se necesitan permisos de administrador: " + how}
	case errors.Is(err, service.ErrNotInstalled):
		return &cfe.Error{Code: cfe.ENOTFOUND, Op: "service", Err: err,
			Message: "el servicio " + serviceName + " no está instalado: instálelo con «cfe-agent service install»"}
	case errors.Is(err, service.ErrPackaged):
		how := "habilítelo e inícielo con «sudo systemctl enable --now " + serviceName + "» (usa la carpeta de datos /var/lib/cfe-agent)"
		if verb == "desinstalar" {
			how = "detenga y deshabilite con «sudo systemctl disable --now " + serviceName + "», o quite el paquete"
		}
		return &cfe.Error{Code: cfe.EINVALID, Op: "service", Err: err,
			Message: "el servicio " + serviceName + " ya lo instaló el paquete del agente (" +
				strings.TrimPrefix(err.Error(), service.ErrPackaged.Error()+": ") + "); no se escribe otra unidad con el mismo nombre: " + how}
	case errors.Is(err, service.ErrUnsupported):
		return &cfe.Error{Code: cfe.EINVALID, Op: "service", Err: err,
			Message: "el modo servicio existe en Windows y en Linux (systemd); en este sistema use el inicio con la sesión"}
	}
	return &cfe.Error{Code: cfe.EINTERNAL, Op: "service", Err: err, Message: "no se pudo " + verb + " el servicio: " + err.Error()}
}

// serviceConfig resolves what the service runs: this executable (or
// --ejecutable), the data directory by the agent's rules as seen by the user
// who runs the service, and that user (Linux). forInstall refuses, before
// anything is written, a service that would run as root without asking.
func serviceConfig(opts app.Options, so serviceOptions, forInstall bool) (service.Config, error) {
	c := service.Config{
		Name:        serviceName,
		DisplayName: "Agente CFE",
		Description: "firma comprobantes fiscales electrónicos (CFE) y sirve el módulo local a las cajas",
		Exe:         so.exe,
	}
	if c.Exe == "" {
		exe, err := os.Executable()
		if err != nil {
			return c, err
		}
		if resolved, err := filepath.EvalSymlinks(exe); err == nil {
			exe = resolved
		}
		if c.Exe, err = filepath.Abs(exe); err != nil {
			return c, err
		}
	}
	if runtime.GOOS == "windows" {
		if so.user != "" {
			return c, cfe.Errorf(cfe.EINVALID, "en Windows el servicio se ejecuta como LocalSystem: --usuario no corresponde")
		}
		dir, err := profiles.DataDir(opts.DataDir)
		c.DataDir = dir
		return c, err
	}
	c.User = so.user
	if c.User == "" {
		c.User = os.Getenv("SUDO_USER")
	}
	me, err := user.Current()
	if err != nil {
		return c, err
	}
	if c.User == "" {
		if forInstall && me.Uid == "0" {
			return c, cfe.Errorf(cfe.EINVALID, "el servicio no se ejecuta como root sin pedirlo: indique el usuario con --usuario (o use sudo desde ese usuario)")
		}
		c.User = me.Username
	}
	u, err := user.Lookup(c.User)
	if err != nil {
		return c, cfe.Errorf(cfe.EINVALID, "el usuario %q no existe en este equipo", c.User)
	}
	if opts.DataDir != "" || os.Getenv(profiles.EnvDataDir) != "" || u.Uid == me.Uid {
		c.DataDir, err = profiles.DataDir(opts.DataDir)
	} else {
		// The default of the user who runs the service (sudo keeps or resets
		// HOME: the user database says where that user's home is).
		c.DataDir = filepath.Join(u.HomeDir, ".config", "cfe-agent")
	}
	// The numbering witness where the service will look for it: systemd
	// gives it the user's HOME and no XDG_STATE_HOME.
	c.WitnessDir = profiles.ServiceWitnessDir(c.DataDir, u.HomeDir)
	return c, err
}
