package app

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/durable"
	"github.com/cfe-agent/cfe-agent/health"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
	"github.com/cfe-agent/cfe-agent/profiles"
	"github.com/cfe-agent/cfe-agent/signer"
	"github.com/cfe-agent/cfe-agent/store"
)

// Backups of the store (README "Backups", docs/numbering.md "Backups and
// restore"). The running agent takes them, because it holds the store's
// lock: on request (POST /backup, "cfe-agent backup") into the data
// directory's backups folder, and automatically into the profile's
// backup.folder every backup.period and after every backup.every_n CFEs,
// keeping the newest backup.keep there.

// RecordChecks are the checks every record of a backup passes (store
// backupcheck.go): the signature of each stored CFE is verified with the
// certificate it carries (signer.Verify), on workers goroutines (0: every
// processor).
func RecordChecks(workers int) store.RecordChecks {
	return store.RecordChecks{Workers: workers, Signature: func(xml []byte) (string, error) {
		v, err := signer.Verify(xml, signer.VerifyOptions{})
		if err != nil {
			return "", err
		}
		return v.DigestValue, nil
	}}
}

// agentRecordChecks are RecordChecks for the backups the running agent
// takes: one processor is left to the signing that goes on meanwhile.
func agentRecordChecks() store.RecordChecks { return RecordChecks(max(1, runtime.GOMAXPROCS(0)-1)) }

// CopyChecks are the checks of "cfe-agent backup" on a backup the running
// agent made and verified, signatures included: every record again, but
// not the signatures. Each signed XML still matches the CRC-32C stored with
// it, so it is the very bytes whose signature the agent verified; a copy
// damaged on its way is refused.
var CopyChecks = store.RecordChecks{}

// backupRetry is how long the agent waits before trying again after an
// automatic backup failed (a share that is not mounted, a full disk), at
// most the period.
const backupRetry = 10 * time.Minute

// backupStamp is the UTC time in a backup's name: names sort by time.
const backupStamp = "20060102T150405.000Z"

// BackupName is the file name of a backup of profile taken at t.
func BackupName(profile string, t time.Time, auto bool) string {
	name := "cfe-agent-" + profile + "-" + t.UTC().Format(backupStamp)
	if auto {
		name += "-auto"
	}
	return name + ".db"
}

// BackupTime reads the time of a backup's name, for the profile's backups
// only.
func BackupTime(profile, name string, auto bool) (time.Time, bool) {
	rest, ok := strings.CutPrefix(name, "cfe-agent-"+profile+"-")
	if !ok {
		return time.Time{}, false
	}
	suffix := ".db"
	if auto {
		suffix = "-auto.db"
	}
	stamp, ok := strings.CutSuffix(rest, suffix)
	if !ok {
		return time.Time{}, false
	}
	t, err := time.Parse(backupStamp, stamp)
	return t, err == nil
}

// ManualBackupDir is where the agent writes the backups asked of it.
func ManualBackupDir(dataDir string, env profiles.Environment, profile string) string {
	return filepath.Join(dataDir, "backups", string(env), strings.ToLower(profile))
}

// BackupManager takes the agent's backups and remembers the last one.
type BackupManager struct {
	a   *Agent
	cfg profiles.Backup
	log *slog.Logger
	now func() time.Time

	run sync.Mutex // one backup at a time
	// base is the store's count of committed CFEs (store.DB.Committed)
	// when the last automatic backup began: backup.every_n counts from it.
	base atomic.Uint64

	mu        sync.Mutex
	lastAt    time.Time // the newest good backup, manual or automatic
	lastFile  string
	lastAuto  time.Time // the newest automatic one: the period counts from it
	lastErr   string
	lastErrAt time.Time
}

func newBackupManager(a *Agent, log *slog.Logger) *BackupManager {
	m := &BackupManager{a: a, cfg: a.Profile.Backup, log: log, now: time.Now}
	m.scan()
	return m
}

// scan finds the newest backups already in the folders (from earlier runs).
func (m *BackupManager) scan() {
	newest := func(dir string, auto bool) (time.Time, string) {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return time.Time{}, ""
		}
		var at time.Time
		var file string
		for _, e := range entries {
			if t, ok := BackupTime(m.a.Name, e.Name(), auto); ok && t.After(at) {
				at, file = t, filepath.Join(dir, e.Name())
			}
		}
		return at, file
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.lastAt, m.lastFile = newest(ManualBackupDir(m.a.DataDir, m.a.Profile.Environment, m.a.Name), false)
	if m.cfg.Enabled() {
		if at, file := newest(m.cfg.Folder, true); at.After(m.lastAt) || m.lastFile == "" {
			m.lastAt, m.lastFile = at, file
		}
		m.lastAuto, _ = newest(m.cfg.Folder, true)
	}
}

// Backup implements localapi.Backups: a backup into the data directory's
// backups folder.
func (m *BackupManager) Backup(ctx context.Context) (*apitype.BackupResult, error) {
	info, err := m.take(ctx, ManualBackupDir(m.a.DataDir, m.a.Profile.Environment, m.a.Name), false)
	if err != nil {
		return nil, err
	}
	return backupResult(info), nil
}

func backupResult(info *store.BackupInfo) *apitype.BackupResult {
	return &apitype.BackupResult{Archivo: info.Path, Bytes: info.Size, TomadaEn: info.TakenAt.In(cfe.Montevideo),
		Transaccion: info.TxID, CFEs: info.Counts.CFEs, Pendientes: info.Counts.Outbox,
		Rechazados: info.Counts.Rejected, Rangos: info.Counts.Ranges}
}

// BackupMeta names the agent's profile in its backups.
func (a *Agent) BackupMeta() store.BackupMeta {
	return store.BackupMeta{Profile: a.Name, Environment: string(a.Profile.Environment), RUC: a.Profile.Company.RUC}
}

// take writes one verified backup into dir and records the outcome.
func (m *BackupManager) take(ctx context.Context, dir string, auto bool) (*store.BackupInfo, error) {
	m.run.Lock()
	defer m.run.Unlock()
	if auto {
		m.base.Store(m.a.DB.Committed())
	}
	now := m.now()
	info, err := m.a.DB.Backup(ctx, filepath.Join(dir, BackupName(m.a.Name, now, auto)), m.a.BackupMeta(), agentRecordChecks())
	if err == nil {
		// The yearly archives go to the same folder: a backup on another disk
		// must hold the archived receipts too (unchanged ones are not copied
		// again).
		var archives []string
		if archives, err = m.a.DB.BackupArchives(ctx, dir, agentRecordChecks()); len(archives) > 0 {
			m.log.Info("archives copied beside the backup", "dir", dir, "files", archives)
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err != nil {
		m.lastErr, m.lastErrAt = cfe.ErrorMessage(err), now
		m.log.Error("backup failed", "dir", dir, "automatic", auto, "err", err)
		return nil, err
	}
	m.lastErr = ""
	m.lastAt, m.lastFile = now, info.Path
	if auto {
		m.lastAuto = now
	}
	m.log.Info("backup written and verified", "file", info.Path, "bytes", info.Size, "cfes", info.Counts.CFEs,
		"outbox", info.Counts.Outbox, "transaction", info.TxID, "automatic", auto)
	return info, nil
}

// Run takes the automatic backups until ctx ends: one at start when the
// newest in the folder is older than the period (or there is none), then
// one per period and one after every backup.every_n CFEs, counted from the
// store's commits (store.DB.WatchCommits). A failure is retried after
// backupRetry (at most the period).
func (m *BackupManager) Run(ctx context.Context) {
	if !m.cfg.Enabled() {
		return
	}
	var commits <-chan struct{} // nil, never ready, without every_n
	if m.cfg.EveryN > 0 {
		c, stop := m.a.DB.WatchCommits()
		defer stop()
		commits = c
	}
	period := m.cfg.PeriodOrDefault()
	var retryAt time.Time
	for {
		m.mu.Lock()
		due := m.lastAuto.Add(period)
		m.mu.Unlock()
		if retryAt.After(due) {
			due = retryAt
		}
		t := time.NewTimer(max(due.Sub(m.now()), 0))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		case <-commits:
			t.Stop()
			if !m.countDue() {
				continue
			}
		}
		if _, err := m.take(ctx, m.cfg.Folder, true); err != nil {
			retryAt = m.now().Add(min(backupRetry, period))
			continue
		}
		retryAt = time.Time{}
		m.rotate()
	}
}

// countDue reports whether backup.every_n CFEs were committed since the
// last automatic backup began.
func (m *BackupManager) countDue() bool {
	return m.a.DB.Committed()-m.base.Load() >= uint64(m.cfg.EveryN)
}

// rotate keeps the newest backup.keep automatic backups of the profile in
// the folder; other files are never touched.
func (m *BackupManager) rotate() {
	entries, err := os.ReadDir(m.cfg.Folder)
	if err != nil {
		m.log.Warn("backup rotation: cannot read the folder", "dir", m.cfg.Folder, "err", err)
		return
	}
	var names []string
	for _, e := range entries {
		if _, ok := BackupTime(m.a.Name, e.Name(), true); ok && e.Type().IsRegular() {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names) // by time: the stamp sorts
	for _, name := range names[:max(len(names)-m.cfg.KeepOrDefault(), 0)] {
		if err := os.Remove(filepath.Join(m.cfg.Folder, name)); err != nil {
			m.log.Warn("backup rotation: cannot remove an old backup", "file", name, "err", err)
		}
	}
}

// Status reports the backups for /state.
func (m *BackupManager) Status() *health.BackupStatus {
	m.mu.Lock()
	defer m.mu.Unlock()
	st := &health.BackupStatus{Automatic: m.cfg.Enabled(), LastAt: m.lastAt, LastFile: m.lastFile,
		LastError: m.lastErr, LastErrorAt: m.lastErrAt}
	if st.Automatic {
		st.Folder, st.Period, st.EveryN, st.Keep = m.cfg.Folder, m.cfg.PeriodOrDefault(), m.cfg.EveryN, m.cfg.KeepOrDefault()
	}
	return st
}

// backupState is the agent's backups for /state: the running manager's, or
// (doctor with the agent stopped) what the folders hold.
func backupState(a *Agent) *health.BackupStatus {
	if a.Backups != nil {
		return a.Backups.Status()
	}
	return newBackupManager(a, slog.New(slog.DiscardHandler)).Status()
}

// newAdminToken returns a random token for POST /backup.
func newAdminToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return hex.EncodeToString(b)
}

// CopyBackup copies a verified backup to dest atomically and verifies the
// copy against what the source held.
func CopyBackup(src, dest string, want *apitype.BackupResult) (*store.BackupInfo, error) {
	var info *store.BackupInfo
	err := durable.WriteFileFunc(dest, func(f *os.File) error { return copyInto(f, src) }, func(tmp string) error {
		var err error
		if info, err = store.VerifyBackup(tmp, CopyChecks); err != nil {
			return err
		}
		if info.Counts.CFEs != want.CFEs || info.Counts.Outbox != want.Pendientes || info.TxID != want.Transaccion {
			return fmt.Errorf("la copia %s no coincide con la que hizo el agente", dest)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	info.Path = dest
	return info, nil
}

// copyInto copies the file src into f.
func copyInto(f io.Writer, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	_, err = io.Copy(f, in)
	return err
}
