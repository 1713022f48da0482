package tray

import (
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/localapi"
)

func TestBackupLine(t *testing.T) {
	now := time.Date(2026, 11, 25, 15, 0, 0, 0, time.UTC)
	last := &localapi.LastBackupReport{At: now.Add(-3 * time.Hour)} // 12:00 UTC is 09:00 in Montevideo
	for _, tc := range []struct {
		name string
		b    *localapi.BackupReport
		want string
	}{
		{"not reported", nil, "Copia de seguridad: —"},
		{"fresh", &localapi.BackupReport{Automaticas: true, Status: localapi.HealthOK, Ultima: last}, "Copia de seguridad: 25/11 09:00 (hace 3 h)"},
		{"late", &localapi.BackupReport{Automaticas: true, Status: localapi.HealthDegraded,
			Ultima: &localapi.LastBackupReport{At: now.Add(-72 * time.Hour)}}, "Copia de seguridad: atrasada; última 22/11 12:00 (hace 3 días)"},
		{"failed", &localapi.BackupReport{Automaticas: true, Status: localapi.HealthDegraded, Error: "disco lleno", Ultima: last},
			"Copia de seguridad: falló la última; última buena 25/11 09:00 (hace 3 h)"},
		{"none configured", &localapi.BackupReport{Status: localapi.HealthOK}, "Copia de seguridad: sin copias automáticas"},
		{"none yet", &localapi.BackupReport{Automaticas: true, Status: localapi.HealthDegraded}, "Copia de seguridad: atrasada; última ninguna"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := &localapi.StateReport{Backup: tc.b}
			if tc.b == nil {
				rep = nil
			}
			if got := backupLine(rep, now); got != tc.want {
				t.Fatalf("backupLine = %q, want %q", got, tc.want)
			}
		})
	}
}
