package tray

import (
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/localapi/apitype"
)

func TestBackupLine(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 25, 15, 0, 0, 0, time.UTC)
	last := &apitype.LastBackupReport{At: now.Add(-3 * time.Hour)} // 12:00 UTC is 09:00 in Montevideo
	for _, tc := range []struct {
		name string
		b    *apitype.BackupReport
		want string
	}{
		{"not reported", nil, "Copia de seguridad: —"},
		{"fresh", &apitype.BackupReport{Automaticas: true, Status: apitype.HealthOK, Ultima: last}, "Copia de seguridad: 25/11 09:00 (hace 3 h)"},
		{"late", &apitype.BackupReport{Automaticas: true, Status: apitype.HealthDegraded,
			Ultima: &apitype.LastBackupReport{At: now.Add(-72 * time.Hour)}}, "Copia de seguridad: atrasada; última 22/11 12:00 (hace 3 días)"},
		{"failed", &apitype.BackupReport{Automaticas: true, Status: apitype.HealthDegraded, Error: "disco lleno", Ultima: last},
			"Copia de seguridad: falló la última; última buena 25/11 09:00 (hace 3 h)"},
		{"none configured", &apitype.BackupReport{Status: apitype.HealthOK}, "Copia de seguridad: sin copias automáticas"},
		{"none yet", &apitype.BackupReport{Automaticas: true, Status: apitype.HealthDegraded}, "Copia de seguridad: atrasada; última ninguna"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := &apitype.StateReport{Backup: tc.b}
			if tc.b == nil {
				rep = nil
			}
			if got := backupLine(rep, now); got != tc.want {
				t.Fatalf("backupLine = %q, want %q", got, tc.want)
			}
		})
	}
}
