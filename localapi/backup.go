package localapi

import (
	"context"
	"crypto/subtle"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"time"

	"github.com/gorilla/mux"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// POST /backup: a consistent copy of the store, taken by the running agent
// (which holds the store's lock) for "cfe-agent backup".
//
// It is an administrator's action, and the copy holds every receipt of the
// company: only a caller on this machine (loopback, or the listener's own
// address when the agent listens on a LAN address; callers from other
// machines are refused whatever token they present) that presents the agent's admin token in X-CFE-Admin gets it.
// The agent makes a new token at every start and writes it only to its run
// file in the data directory (mode 0600), so the caller proves it may read
// the data directory, which holds the store anyway: another OS user, or a web
// page, cannot make the agent copy the store. The copy is written by the
// agent into its own backup folder, never to a path the caller names, and
// the answer says where; no store bytes travel over HTTP.

// backupWriteTimeout bounds one POST /backup.
const backupWriteTimeout = time.Hour

// headerAdmin carries the admin token of POST /backup.
const headerAdmin = "X-CFE-Admin"

// Backups takes backups of the store for POST /backup.
type Backups interface {
	// Backup writes and verifies a copy of the store and says what it holds.
	Backup(ctx context.Context) (*BackupResult, error)
}

// BackupResult is the answer of POST /backup.
type BackupResult struct {
	OK          bool      `json:"ok"`
	Archivo     string    `json:"archivo"`     // the verified copy
	Bytes       int64     `json:"bytes"`       // its size
	TomadaEn    time.Time `json:"tomada_en"`   // the instant it copies
	Transaccion int       `json:"transaccion"` // the store's transaction it copies
	CFEs        int       `json:"cfes"`
	Pendientes  int       `json:"pendientes"` // outbox entries
	Rechazados  int       `json:"rechazados"`
	Rangos      int       `json:"rangos"`
}

// sameMachine reports whether r comes from this machine: over loopback, or
// from the very address it was sent to (a listener on a LAN address, called
// from the machine itself, sees its own address as the peer).
func sameMachine(r *http.Request) bool {
	if isLoopback(r.RemoteAddr) {
		return true
	}
	remote, err := netip.ParseAddrPort(r.RemoteAddr)
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if err != nil || !ok {
		return false
	}
	l, err := netip.ParseAddrPort(local.String())
	return err == nil && l.Addr().Unmap() == remote.Addr().Unmap()
}

func (s *Server) registerBackupRoutes(r *mux.Router) {
	s.handle(r, http.MethodPost, "/backup", s.handleBackup)
}

func (s *Server) handleBackup(w http.ResponseWriter, r *http.Request) {
	switch {
	case !sameMachine(r):
		s.refuse(w, r, "backup from another machine", &cfe.Error{Code: cfe.EFORBIDDEN,
			Message: "las copias de seguridad solo se piden desde este mismo equipo"})
		return
	case s.cfg.Backups == nil || s.cfg.AdminToken == "":
		s.writeError(w, r, cfe.Errorf(cfe.EUNAVAILABLE, "este agente no hace copias de seguridad"))
		return
	case subtle.ConstantTimeCompare([]byte(r.Header.Get(headerAdmin)), []byte(s.cfg.AdminToken)) != 1:
		s.refuse(w, r, "missing or wrong admin token", &cfe.Error{Code: cfe.EUNAUTHORIZED,
			Message: "falta el token de administración del agente: use «cfe-agent backup» en este equipo",
			Fields:  []cfe.FieldError{{Campo: headerAdmin, Mensaje: "el token está en el archivo de ejecución del agente (carpeta de datos)"}}})
		return
	}
	// A large store on a slow share may take longer than the server's
	// write timeout; the answer must still arrive.
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(backupWriteTimeout))
	res, err := s.cfg.Backups.Backup(r.Context())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	res.OK = true
	writeJSON(w, http.StatusOK, res)
}

// BackupStatus is what the agent knows of its automatic backups, for /state.
type BackupStatus struct {
	Automatic bool          // a backup folder is configured
	Folder    string        // where automatic backups go
	Period    time.Duration // how often
	EveryN    int           // and after every N CFEs (0: only by period)
	Keep      int           // how many are kept
	// LastAt and LastFile are the newest good backup (manual ones too);
	// zero when there is none.
	LastAt   time.Time
	LastFile string
	// LastError is why the last attempt failed (Spanish); "" when it
	// succeeded or none was tried.
	LastError   string
	LastErrorAt time.Time
}

// BackupReport is the "backup" object of /state.
type BackupReport struct {
	Automaticas bool   `json:"automaticas"`
	Carpeta     string `json:"carpeta,omitempty"`
	PeriodoS    int64  `json:"periodo_s,omitempty"`
	CadaN       int    `json:"cada_n,omitempty"`
	Conservar   int    `json:"conservar,omitempty"`
	// Ultima is the newest good backup: its time, age and file.
	Ultima *LastBackupReport `json:"ultima"`
	// Error is why the last attempt failed; absent after a success.
	Error   string     `json:"error,omitempty"`
	ErrorAt *time.Time `json:"error_at,omitempty"`
	// Status is ok or degraded (late, or the last one failed).
	Status string `json:"status"`
}

// LastBackupReport is a backup of /state.
type LastBackupReport struct {
	At      time.Time `json:"at"`
	EdadS   int64     `json:"edad_s"`
	Archivo string    `json:"archivo"`
}

// addBackup reports the backups. With automatic backups, one older than its
// period (or none yet) or a failed last attempt is "degraded": the disk may
// die before the receipts are safe elsewhere.
func (rep *StateReport) addBackup(b *BackupStatus, now time.Time) {
	if b == nil {
		return
	}
	br := &BackupReport{Automaticas: b.Automatic, Carpeta: b.Folder, CadaN: b.EveryN, Conservar: b.Keep, Status: HealthOK}
	rep.Backup = br
	if b.Automatic {
		br.PeriodoS = int64(b.Period / time.Second)
	}
	if !b.LastAt.IsZero() {
		br.Ultima = &LastBackupReport{At: b.LastAt.In(cfe.Montevideo), EdadS: int64(now.Sub(b.LastAt) / time.Second), Archivo: b.LastFile}
	}
	if b.LastError != "" {
		at := b.LastErrorAt.In(cfe.Montevideo)
		br.Error, br.ErrorAt, br.Status = b.LastError, &at, HealthDegraded
		rep.flag(HealthDegraded, fmt.Sprintf("la última copia de seguridad falló (%s): %s", at.Format("02/01 15:04"), b.LastError))
	}
	if !b.Automatic {
		return
	}
	switch {
	case b.LastAt.IsZero():
		br.Status = HealthDegraded
		rep.flag(HealthDegraded, "todavía no hay ninguna copia de seguridad en "+b.Folder)
	case now.Sub(b.LastAt) > b.Period:
		br.Status = HealthDegraded
		rep.flag(HealthDegraded, fmt.Sprintf("la última copia de seguridad es del %s, más vieja que su período (%s)",
			b.LastAt.In(cfe.Montevideo).Format("02/01 15:04"), b.Period))
	}
}

// Backup asks the running agent for a backup (POST /backup); the client
// needs ClientOptions.AdminToken.
func (c *Client) Backup(ctx context.Context) (*BackupResult, error) {
	var out BackupResult
	if err := c.do(ctx, http.MethodPost, "/backup", []byte("{}"), &out, http.StatusOK); err != nil {
		return nil, err
	}
	return &out, nil
}
