package autostart

import "testing"

// TestStatus_Describe: the status line names whose entry starts the agent
// and where each entry is.
func TestStatus_Describe(t *testing.T) {
	t.Parallel()
	const user, machine = "/home/ana/.config/autostart/cfe-agent.desktop", "/etc/xdg/autostart/cfe-agent.desktop"
	tests := []struct {
		st   Status
		want string
	}{
		{Status{UserPath: user, MachinePath: machine}, "inicio con el sistema: desactivado"},
		{Status{User: true, UserPath: user, MachinePath: machine}, "inicio con el sistema: activado (" + user + ")"},
		{Status{Machine: true, UserPath: user, MachinePath: machine},
			"inicio con el sistema: activado para todos los usuarios por el instalador (" + machine + ")"},
		{Status{Machine: true, User: true, UserPath: user, MachinePath: machine},
			"inicio con el sistema: activado para todos los usuarios por el instalador (" + machine + ") y también para este usuario (" + user + ")"},
		{Status{Machine: true, User: true, Replaced: true, UserPath: user, MachinePath: machine},
			"inicio con el sistema: activado para este usuario (" + user + "), en lugar de la entrada del instalador (" + machine + ")"},
		{Status{Machine: true, Hidden: true, UserPath: user, MachinePath: machine},
			"inicio con el sistema: desactivado para este usuario (" + user + " oculta la entrada del instalador, " + machine + ")"},
	}
	for _, tt := range tests {
		if got := tt.st.Describe(); got != tt.want {
			t.Errorf("Describe(%+v) =\n%s\nwant\n%s", tt.st, got, tt.want)
		}
	}
}
