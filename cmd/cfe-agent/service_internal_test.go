package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cfe-agent/cfe-agent/service"
)

// TestServiceError_packaged: install and uninstall of the .deb's own unit
// are refused in Spanish, naming the packaged unit and what to run instead.
func TestServiceError_packaged(t *testing.T) {
	err := fmt.Errorf("%w: %s", service.ErrPackaged, "/usr/lib/systemd/system/cfe-agent.service")
	for verb, want := range map[string]string{
		"instalar":    "«sudo systemctl enable --now cfe-agent»",
		"desinstalar": "«sudo systemctl disable --now cfe-agent», o quite el paquete",
	} {
		msg := serviceError(verb, err).Error()
		for _, part := range []string{"ya lo instaló el paquete del agente (/usr/lib/systemd/system/cfe-agent.service)", want} {
			if !strings.Contains(msg, part) {
				t.Errorf("%s: %q lacks %q", verb, msg, part)
			}
		}
	}
}

func TestDescribeService(t *testing.T) {
	tests := []struct {
		st   service.State
		want string
	}{
		{service.State{}, "servicio cfe-agent: no instalado"},
		{service.State{Installed: true, Running: true, Detail: "active (running)", Enabled: true,
			Unit: "/etc/systemd/system/cfe-agent.service"},
			"servicio cfe-agent: instalado, en ejecución (active (running)), se inicia al arrancar el equipo"},
		{service.State{Installed: true, Detail: "inactive (dead)", Packaged: true,
			Unit: "/usr/lib/systemd/system/cfe-agent.service"},
			"servicio cfe-agent: instalado por el paquete (/usr/lib/systemd/system/cfe-agent.service), no está en ejecución (inactive (dead)), no se inicia al arrancar el equipo"},
	}
	for _, tt := range tests {
		if got := describeService(tt.st); got != tt.want {
			t.Errorf("describeService(%+v) =\n%s\nwant\n%s", tt.st, got, tt.want)
		}
	}
}
