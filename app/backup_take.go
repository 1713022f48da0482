package app

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/store"
)

// backupRequestTimeout bounds "cfe-agent backup" through the running agent.
const backupRequestTimeout = time.Hour

// TakeBackup takes a verified backup of the active profile's store ("cfe-agent
// backup") into out, or into the data directory's backups folder when out is
// "": through the running agent when there is one (it holds the store), else
// directly.
func TakeBackup(ctx context.Context, opts Options, out string, log *slog.Logger) (*store.BackupInfo, error) {
	dataDir, cfg, _, err := LoadConfig(opts)
	if err != nil {
		return nil, err
	}
	if out != "" {
		if out, err = filepath.Abs(out); err != nil {
			return nil, err
		}
	}
	c, info, ok, err := adminClient(dataDir, cfg, backupRequestTimeout)
	if err != nil {
		return nil, err
	}
	if ok {
		res, err := c.Backup(ctx)
		switch {
		case err == nil:
			if out == "" {
				return store.VerifyBackup(res.Archivo, CopyChecks)
			}
			bi, err := CopyBackup(res.Archivo, out, res)
			if err != nil {
				return nil, err
			}
			_ = os.Remove(res.Archivo) // the copy asked for is out; the data directory keeps no second one
			return bi, nil
		case !agentGone(err):
			return nil, &cfe.Error{Code: cfe.ErrorCode(err), Err: err,
				Message: fmt.Sprintf("el agente en ejecución (%s) no hizo la copia: %s", info.BaseURL, cfe.ErrorMessage(err))}
		}
	}
	a, err := Open(ctx, opts, log)
	if err != nil {
		return nil, err
	}
	defer a.Close()
	if out == "" {
		out = filepath.Join(ManualBackupDir(a.DataDir, a.Profile.Environment, a.Name), BackupName(a.Name, time.Now(), false))
	}
	return a.DB.Backup(ctx, out, a.BackupMeta(), RecordChecks(0))
}

// WriteBackupInfo writes the technician's report of a backup taken.
func WriteBackupInfo(w io.Writer, info *store.BackupInfo) {
	fmt.Fprintf(w, "copia de seguridad verificada: %s (%d bytes)\n", info.Path, info.Size)
	fmt.Fprintf(w, "  %d comprobantes, %d pendientes de envío, %d rechazados, %d rangos CAE; transacción %d del %s\n",
		info.Counts.CFEs, info.Counts.Outbox, info.Counts.Rejected, info.Counts.Ranges, info.TxID,
		info.TakenAt.In(cfe.Montevideo).Format("02/01/2006 15:04:05"))
}
