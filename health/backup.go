package health

import (
	"fmt"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
)

// addBackup reports the backups. With automatic backups, one older than its
// period (or none yet) or a failed last attempt is "degraded": the disk may
// die before the receipts are safe elsewhere.
func addBackup(rep *apitype.StateReport, b *BackupStatus, now time.Time) {
	if b == nil {
		return
	}
	br := &apitype.BackupReport{Automaticas: b.Automatic, Carpeta: b.Folder, CadaN: b.EveryN, Conservar: b.Keep, Status: apitype.HealthOK}
	rep.Backup = br
	if b.Automatic {
		br.PeriodoS = int64(b.Period / time.Second)
	}
	if !b.LastAt.IsZero() {
		br.Ultima = &apitype.LastBackupReport{At: b.LastAt.In(cfe.Montevideo), EdadS: int64(now.Sub(b.LastAt) / time.Second), Archivo: b.LastFile}
	}
	if b.LastError != "" {
		at := b.LastErrorAt.In(cfe.Montevideo)
		br.Error, br.ErrorAt, br.Status = b.LastError, &at, apitype.HealthDegraded
		Flag(rep, apitype.HealthDegraded, fmt.Sprintf("la última copia de seguridad falló (%s): %s", at.Format("02/01 15:04"), b.LastError))
	}
	if !b.Automatic {
		return
	}
	switch {
	case b.LastAt.IsZero():
		br.Status = apitype.HealthDegraded
		Flag(rep, apitype.HealthDegraded, "todavía no hay ninguna copia de seguridad en "+b.Folder)
	case now.Sub(b.LastAt) > b.Period:
		br.Status = apitype.HealthDegraded
		Flag(rep, apitype.HealthDegraded, fmt.Sprintf("la última copia de seguridad es del %s, más vieja que su período (%s)",
			b.LastAt.In(cfe.Montevideo).Format("02/01 15:04"), b.Period))
	}
}
