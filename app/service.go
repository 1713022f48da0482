package app

import (
	"errors"
	"os"
	"os/user"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/profiles"
	"github.com/cfe-agent/cfe-agent/service"
)

// The agent as a system service ("cfe-agent service"): what the service
// runs, resolved by the agent's rules, and the service manager's failures
// said in Spanish. The service package does the installing and
// controlling.

// ServiceName names the agent's service: the systemd unit
// cfe-agent.service, the Windows service cfe-agent.
const ServiceName = "cfe-agent"

// ServiceConfig resolves what the service runs: exe (this executable when
// ""), the data directory by the agent's rules as seen by the user who runs
// the service, and that user on Linux (usr; "" for the one who used sudo, or
// the current one). forInstall refuses, before anything is written, a
// service that would run as root without asking.
func ServiceConfig(opts Options, usr, exe string, forInstall bool) (service.Config, error) {
	c := service.Config{
		Name:        ServiceName,
		DisplayName: "Agente CFE",
		Description: "firma comprobantes fiscales electrónicos (CFE) y sirve el módulo local a las cajas",
		Exe:         exe,
	}
	if c.Exe == "" {
		var err error
		if c.Exe, err = executable(); err != nil {
			return c, err
		}
	}
	if runtime.GOOS == "windows" {
		if usr != "" {
			return c, cfe.Errorf(cfe.EINVALID, "en Windows el servicio se ejecuta como LocalSystem: --usuario no corresponde")
		}
		dir, err := profiles.DataDir(opts.DataDir)
		c.DataDir = dir
		return c, err
	}
	return c, serviceUser(&c, opts, usr, forInstall)
}

// serviceUser sets the Linux user that runs the service and, as that user
// sees them, the data directory and the numbering witness's folder.
func serviceUser(c *service.Config, opts Options, usr string, forInstall bool) error {
	c.User = usr
	if c.User == "" {
		c.User = os.Getenv("SUDO_USER")
	}
	me, err := user.Current()
	if err != nil {
		return err
	}
	if c.User == "" {
		if forInstall && me.Uid == "0" {
			return cfe.Errorf(cfe.EINVALID, "el servicio no se ejecuta como root sin pedirlo: indique el usuario con --usuario (o use sudo desde ese usuario)")
		}
		c.User = me.Username
	}
	u, err := user.Lookup(c.User)
	if err != nil {
		return cfe.Errorf(cfe.EINVALID, "el usuario %q no existe en este equipo", c.User)
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
	return err
}

// ServiceError says in Spanish why the service operation verb ("instalar",
// "iniciar"…) failed.
func ServiceError(verb string, err error) error {
	var said *cfe.Error
	switch {
	case errors.As(err, &said) && said.Op == "service":
		return err // already says it (the start's checks)
	case errors.Is(err, service.ErrNotAdmin):
		how := "ejecútelo con sudo"
		if runtime.GOOS == "windows" {
			how = "abra la consola con «Ejecutar como administrador»"
		}
		return &cfe.Error{Code: cfe.EINVALID, Op: "service", Err: err,
			Message: "para " + verb + " el servicio se necesitan permisos de administrador: " + how}
	case errors.Is(err, service.ErrNotInstalled):
		return &cfe.Error{Code: cfe.ENOTFOUND, Op: "service", Err: err,
			Message: "el servicio " + ServiceName + " no está instalado: instálelo con «cfe-agent service install»"}
	case errors.Is(err, service.ErrPackaged):
		how := "habilítelo e inícielo con «sudo systemctl enable --now " + ServiceName + "» (usa la carpeta de datos /var/lib/cfe-agent)"
		if verb == "desinstalar" {
			how = "detenga y deshabilite con «sudo systemctl disable --now " + ServiceName + "», o quite el paquete"
		}
		return &cfe.Error{Code: cfe.EINVALID, Op: "service", Err: err,
			Message: "el servicio " + ServiceName + " ya lo instaló el paquete del agente (" +
				strings.TrimPrefix(err.Error(), service.ErrPackaged.Error()+": ") + "); no se escribe otra unidad con el mismo nombre: " + how}
	case errors.Is(err, service.ErrUnsupported):
		return &cfe.Error{Code: cfe.EINVALID, Op: "service", Err: err,
			Message: "el modo servicio existe en Windows y en Linux (systemd); en este sistema use el inicio con la sesión"}
	}
	return &cfe.Error{Code: cfe.EINTERNAL, Op: "service", Err: err, Message: "no se pudo " + verb + " el servicio: " + err.Error()}
}

// executable is this program's executable, its symbolic links resolved, as
// an absolute path: what a service or an autostart entry runs.
func executable() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	if resolved, err := filepath.EvalSymlinks(exe); err == nil {
		exe = resolved
	}
	return filepath.Abs(exe)
}
