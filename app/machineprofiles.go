package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/profiles"
)

// Windows with several users (issue 34, docs/windows-users.md). Each
// Windows user has a data directory of their own (%APPDATA%\cfe-agent), and
// the MSI starts the agent at every user's login: a second cashier's
// account, never configured, would start the built-in sandbox profile and
// sign test receipts at a till that issues real ones. So every agent that
// serves a production profile records it in the machine-wide folder
// (profiles.MachineDir: %ProgramData%\cfe-agent\produccion\<user>.json),
// and an agent about to serve a sandbox profile from the default data
// directory refuses while another user's production profile is recorded
// there. The data stays per user (no migration, each user's certificate
// and store readable by that user only); a technician who wants one agent
// for the whole machine installs the service.

// productionDir is where production profiles are recorded, "" when the
// machine has no machine-wide folder.
func productionDir() (string, error) {
	dir, err := profiles.MachineDir()
	if dir == "" || err != nil {
		return "", err
	}
	return filepath.Join(dir, "produccion"), nil
}

// machineProduction is one user's production profile, as recorded.
type machineProduction struct {
	User        string    `json:"usuario"`
	Profile     string    `json:"perfil"`
	RUC         string    `json:"ruc"`
	RazonSocial string    `json:"razon_social"`
	DataDir     string    `json:"carpeta_datos"`
	At          time.Time `json:"registrado"`
}

// currentUser is the account the agent runs as ("DOMINIO\ana" on Windows).
func currentUser() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return os.Getenv("USERNAME")
}

// userFile is the record's file name of a user: the name with anything but
// letters, digits, '-', '_' and '.' replaced.
func userFile(name string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, strings.ToLower(name)) + ".json"
}

// recordProduction records, when a's profile is production, that this user
// runs it on this machine; when this user's configuration has no production
// profile any more, its record goes. Failures are logged only: the record
// protects other users' sessions, it never stops this one.
func recordProduction(a *Agent, log *slog.Logger) {
	dir, err := productionDir()
	if dir == "" {
		if err != nil {
			log.Warn("no machine-wide folder: production profiles are not recorded for other users", "err", err)
		}
		return
	}
	me := currentUser()
	file := filepath.Join(dir, userFile(me))
	if a.Profile.Environment != profiles.Produccion {
		hasProduction := slices.ContainsFunc(slices.Collect(maps.Values(a.Config.Profiles)), func(p profiles.Profile) bool {
			return p.Environment == profiles.Produccion
		})
		if !hasProduction {
			if err := os.Remove(file); err == nil {
				log.Info("this user has no production profile any more: its machine-wide record is gone", "file", file)
			}
		}
		return
	}
	rec := machineProduction{User: me, Profile: a.Name, RUC: a.Profile.Company.RUC, RazonSocial: a.Profile.Company.RazonSocial,
		DataDir: a.DataDir, At: time.Now().UTC()}
	b, err := json.MarshalIndent(rec, "", "  ")
	if err == nil {
		err = os.MkdirAll(dir, 0o755)
	}
	if err == nil {
		tmp := file + ".tmp"
		if err = os.WriteFile(tmp, b, 0o644); err == nil {
			err = os.Rename(tmp, file)
		}
	}
	if err != nil {
		log.Warn("could not record the production profile for the machine's other users", "file", file, "err", err)
	}
}

// otherProduction returns the production profiles other users of this
// machine recorded, sorted by user; none without a machine-wide folder.
func otherProduction() ([]machineProduction, error) {
	dir, err := productionDir()
	if dir == "" || err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	mine := userFile(currentUser())
	var out []machineProduction
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") || e.Name() == mine {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		var rec machineProduction
		if json.Unmarshal(b, &rec) == nil && rec.User != "" {
			out = append(out, rec)
		}
	}
	slices.SortFunc(out, func(a, b machineProduction) int { return strings.Compare(a.User, b.User) })
	return out, nil
}

// checkTestModeAllowed refuses to serve a sandbox profile from the default
// data directory (the one the MSI's login entry opens) while another user
// of the machine runs a production profile: this user's till would sign
// receipts without fiscal value. A data directory given explicitly
// (--data-dir, CFE_AGENT_DATA_DIR) is a technician's choice and is served.
func checkTestModeAllowed(opts Options, cfg *profiles.Config) error {
	p, ok := cfg.ActiveProfile()
	if !ok || p.Environment == profiles.Produccion || opts.DataDir != "" || os.Getenv(profiles.EnvDataDir) != "" {
		return nil
	}
	others, err := otherProduction()
	if err != nil || len(others) == 0 {
		return nil // an unreadable folder protects nothing, and stops nothing
	}
	o := others[0]
	return &cfe.Error{Code: cfe.EINVALID, Op: "app.checkTestModeAllowed", Message: fmt.Sprintf(
		"en este equipo se emiten comprobantes reales: el usuario %s usa el perfil de producción «%s» (RUC %s). "+
			"Este usuario no tiene perfil de producción, y el agente no inicia el perfil de prueba «%s» para que esta caja "+
			"no firme comprobantes sin valor fiscal. Pida al técnico que configure este usuario («cfe-agent profile add») "+
			"o que instale el servicio para todo el equipo, o use la sesión de %s",
		o.User, o.Profile, o.RUC, cfg.Active, o.User)}
}
