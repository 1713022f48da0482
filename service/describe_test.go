package service

import "testing"

func TestState_Describe(t *testing.T) {
	t.Parallel()
	tests := []struct {
		st   State
		want string
	}{
		{State{}, "servicio cfe-agent: no instalado"},
		{State{Installed: true, Running: true, Detail: "active (running)", Enabled: true,
			Unit: "/etc/systemd/system/cfe-agent.service"},
			"servicio cfe-agent: instalado, en ejecución (active (running)), se inicia al arrancar el equipo"},
		{State{Installed: true, Detail: "inactive (dead)", Packaged: true,
			Unit: "/usr/lib/systemd/system/cfe-agent.service"},
			"servicio cfe-agent: instalado por el paquete (/usr/lib/systemd/system/cfe-agent.service), no está en ejecución (inactive (dead)), no se inicia al arrancar el equipo"},
	}
	for _, tt := range tests {
		if got := tt.st.Describe("cfe-agent"); got != tt.want {
			t.Errorf("Describe(%+v) =\n%s\nwant\n%s", tt.st, got, tt.want)
		}
	}
}
