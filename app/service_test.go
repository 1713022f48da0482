package app

import (
	"errors"
	"fmt"
	"os/user"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/service"
)

// TestServiceError_packaged: install and uninstall of the .deb's own unit
// are refused in Spanish, naming the packaged unit and what to run instead.
func TestServiceError_packaged(t *testing.T) {
	t.Parallel()
	err := fmt.Errorf("%w: %s", service.ErrPackaged, "/usr/lib/systemd/system/cfe-agent.service")
	for verb, want := range map[string]string{
		"instalar":    "«sudo systemctl enable --now cfe-agent»",
		"desinstalar": "«sudo systemctl disable --now cfe-agent», o quite el paquete",
	} {
		msg := ServiceError(verb, err).Error()
		for _, part := range []string{"ya lo instaló el paquete del agente (/usr/lib/systemd/system/cfe-agent.service)", want} {
			if !strings.Contains(msg, part) {
				t.Errorf("%s: %q lacks %q", verb, msg, part)
			}
		}
	}
}

// TestServiceError: each of the service manager's failures said in
// Spanish with its code; an error the start already said passes unchanged.
func TestServiceError(t *testing.T) {
	t.Parallel()
	said := &cfe.Error{Code: cfe.EUNAVAILABLE, Op: "service", Message: "otro agente CFE usa la carpeta de datos del servicio"}
	admin := "ejecútelo con sudo"
	if runtime.GOOS == "windows" {
		admin = "abra la consola con «Ejecutar como administrador»"
	}
	tests := []struct {
		err  error
		code string
		want string
	}{
		{fmt.Errorf("start: %w", service.ErrNotAdmin), cfe.EINVALID, "para iniciar el servicio se necesitan permisos de administrador: " + admin},
		{service.ErrNotInstalled, cfe.ENOTFOUND, "el servicio cfe-agent no está instalado: instálelo con «cfe-agent service install»"},
		{service.ErrUnsupported, cfe.EINVALID, "el modo servicio existe en Windows y en Linux (systemd)"},
		{errors.New("boom"), cfe.EINTERNAL, "no se pudo iniciar el servicio: boom"},
		{said, cfe.EUNAVAILABLE, said.Message},
	}
	for _, tt := range tests {
		err := ServiceError("iniciar", tt.err)
		if cfe.ErrorCode(err) != tt.code || !strings.HasPrefix(cfe.ErrorMessage(err), tt.want) || !errors.Is(err, tt.err) {
			t.Errorf("ServiceError(%v) = %v (%s), want %s %q wrapping it", tt.err, err, cfe.ErrorCode(err), tt.code, tt.want)
		}
	}
}

// TestServiceConfig: the service runs the named executable on the data
// directory given, as the user named, with the witness outside the data
// directory; a user the machine does not have is refused.
func TestServiceConfig(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("the Windows service runs as LocalSystem: no user to resolve")
	}
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	dataDir := filepath.Join(t.TempDir(), "datos")
	c, err := ServiceConfig(Options{DataDir: dataDir}, me.Username, "/opt/cfe-agent/cfe-agent", false)
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != ServiceName || c.Exe != "/opt/cfe-agent/cfe-agent" || c.DataDir != dataDir || c.User != me.Username ||
		c.WitnessDir == "" || strings.HasPrefix(c.WitnessDir, dataDir+string(filepath.Separator)) {
		t.Errorf("ServiceConfig = %+v", c)
	}
	if c, err := ServiceConfig(Options{DataDir: dataDir}, me.Username, "", false); err != nil || !filepath.IsAbs(c.Exe) {
		t.Errorf("ServiceConfig without an executable = %q, %v; want this program's absolute path", c.Exe, err)
	}
	_, err = ServiceConfig(Options{DataDir: dataDir}, "no-existe-cfe", "/x", true)
	if cfe.ErrorCode(err) != cfe.EINVALID || cfe.ErrorMessage(err) != `el usuario "no-existe-cfe" no existe en este equipo` {
		t.Errorf("an unknown user: %v", err)
	}
}
