package main

import (
	"fmt"
	"time"

	"github.com/cfe-agent/cfe-agent/localapi/apitype"
)

// backup is doctor's line on the backups: WARN when automatic backups are
// late or the last one failed, or when there are none configured.
func (d *doctor) backup(r *apitype.StateReport) {
	b := r.Backup
	if b == nil {
		return
	}
	last := "ninguna"
	if b.Ultima != nil {
		last = fmt.Sprintf("%s (%s, hace %s)", b.Ultima.Archivo, b.Ultima.At.Format("02/01/2006 15:04"),
			(time.Duration(b.Ultima.EdadS) * time.Second).Round(time.Minute))
	}
	switch {
	case b.Error != "":
		d.line("WARN", "copias de seguridad", "la última falló: %s; última buena: %s", b.Error, last)
	case !b.Automaticas:
		d.line("WARN", "copias de seguridad", "no hay copias automáticas (configure backup.folder en el perfil, en otro disco); última: %s", last)
	case b.Status != apitype.HealthOK:
		d.line("WARN", "copias de seguridad", "atrasadas: última %s; período %s en %s", last, time.Duration(b.PeriodoS)*time.Second, b.Carpeta)
	default:
		d.line("OK", "copias de seguridad", "última %s; cada %s en %s, se conservan %d", last, time.Duration(b.PeriodoS)*time.Second, b.Carpeta, b.Conservar)
	}
}
