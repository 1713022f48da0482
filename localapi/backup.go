package localapi

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"time"

	"github.com/gorilla/mux"

	"github.com/cfe-agent/cfe-agent/localapi/apitype"
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
const headerAdmin = apitype.HeaderAdmin

// Backups takes backups of the store for POST /backup.
type Backups interface {
	// Backup writes and verifies a copy of the store and says what it holds.
	Backup(ctx context.Context) (*apitype.BackupResult, error)
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
	if !s.admitAdmin(w, r, adminRoute{what: "backup", elsewhere: "las copias de seguridad solo se piden desde este mismo equipo",
		missing: "este agente no hace copias de seguridad", command: "«cfe-agent backup»"}, s.cfg.Backups != nil) {
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
