package tray

import (
	"fmt"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
)

// backupLine is the menu's status line on the store's backups: the last
// one's time and age, or why it needs attention (the icon is amber then:
// /health reports it degraded).
func backupLine(rep *apitype.StateReport, now time.Time) string {
	if rep == nil || rep.Backup == nil {
		return "Copia de seguridad: —"
	}
	b := rep.Backup
	last := "ninguna"
	if b.Ultima != nil {
		last = fmt.Sprintf("%s (%s)", b.Ultima.At.In(cfe.Montevideo).Format("02/01 15:04"), cfe.Hace(now.Sub(b.Ultima.At)))
	}
	switch {
	case b.Error != "":
		return "Copia de seguridad: falló la última; última buena " + last
	case b.Automaticas && b.Status != apitype.HealthOK:
		return "Copia de seguridad: atrasada; última " + last
	case !b.Automaticas && b.Ultima == nil:
		return "Copia de seguridad: sin copias automáticas"
	}
	return "Copia de seguridad: " + last
}
