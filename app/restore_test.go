package app

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
	"github.com/cfe-agent/cfe-agent/profiles"
)

// TestParseConfirmed: restore's --confirmar-numeros-usados, TIPO:SERIE:NUMERO
// each, the serie upper-cased; anything else is refused naming the value.
func TestParseConfirmed(t *testing.T) {
	t.Parallel()
	got, err := ParseConfirmed([]string{"101:a:1234", "111:B:0"})
	want := []cfe.LastNumber{{Type: 101, Serie: "A", Last: 1234}, {Type: 111, Serie: "B", Last: 0}}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("ParseConfirmed = %v, %v; want %v", got, err, want)
	}
	if got, err := ParseConfirmed(nil); err != nil || got != nil {
		t.Errorf("ParseConfirmed(nil) = %v, %v", got, err)
	}
	for _, bad := range []string{"101:A", "101:A:1:2", "abc:A:1", "999:A:1", "101::1", "101:A:-1", "101:A:x", ""} {
		_, err := ParseConfirmed([]string{"101:A:1", bad})
		if cfe.ErrorCode(err) != cfe.EINVALID ||
			cfe.ErrorMessage(err) != `--confirmar-numeros-usados "`+bad+`": se espera TIPO:SERIE:NUMERO, por ejemplo 101:A:1234` {
			t.Errorf("ParseConfirmed(%q) = %v", bad, err)
		}
	}
}

// TestKnownBackups: the backups recuperar tries when none is named are the
// profile's, in its backups folder and its backup.folder, newest first;
// other profiles' and other files are left out.
func TestKnownBackups(t *testing.T) {
	t.Parallel()
	dataDir, auto := t.TempDir(), t.TempDir()
	p := profiles.Profile{Environment: profiles.Sandbox, Backup: profiles.Backup{Folder: auto}}
	a := &Agent{DataDir: dataDir, Name: "caja", Profile: p}
	manual := ManualBackupDir(dataDir, p.Environment, "caja")
	if err := os.MkdirAll(manual, 0o700); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	files := map[string]string{
		"oldest":                         filepath.Join(manual, BackupName("caja", at, false)),
		"newest":                         filepath.Join(auto, BackupName("caja", at.Add(2*time.Hour), true)),
		"middle":                         filepath.Join(manual, BackupName("caja", at.Add(time.Hour), false)),
		"other":                          filepath.Join(auto, BackupName("oficina", at.Add(3*time.Hour), true)),
		"manual in the automatic folder": filepath.Join(auto, BackupName("caja", at.Add(4*time.Hour), false)),
		"not a backup":                   filepath.Join(manual, "notas.txt"),
	}
	for _, f := range files {
		if err := os.WriteFile(f, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{files["newest"], files["middle"], files["oldest"]}
	if got := knownBackups(a); !slices.Equal(got, want) {
		t.Errorf("knownBackups =\n%q\nwant\n%q", got, want)
	}
	a.Profile.Backup.Folder = ""
	if got := knownBackups(a); !slices.Equal(got, want[1:]) {
		t.Errorf("knownBackups without automatic backups = %q, want %q", got, want[1:])
	}
}

// TestWriteRecovered: the report of a recovery names the copies set aside,
// where the CFE came from, and when it goes to the hosted service.
func TestWriteRecovered(t *testing.T) {
	t.Parallel()
	res := &apitype.RecoverResult{UUID: "u1", TipoCFE: 101, Nombre: "e-Ticket", Serie: "A", Numero: 7, Origen: "/copias/b.db",
		EnCola: true, Descartadas: []string{"/copias/c.db: no tiene el comprobante"}}
	tests := []struct {
		name    string
		origen  string
		queued  bool
		running bool
		want    string
	}{
		{"from a backup, the agent running", "/copias/b.db", true, true, "descartada: /copias/c.db: no tiene el comprobante\n" +
			"recuperado: e-Ticket A-7 (uuid u1), de la copia de seguridad /copias/b.db\n" +
			"volvió a la cola de envíos: el agente lo envía ahora\n"},
		{"from the service, the agent stopped", "servicio", true, false, "descartada: /copias/c.db: no tiene el comprobante\n" +
			"recuperado: e-Ticket A-7 (uuid u1), de la copia del servicio en la nube\n" +
			"volvió a la cola de envíos: el agente lo envía cuando se inicie\n"},
		{"already delivered", "servicio", false, true, "descartada: /copias/c.db: no tiene el comprobante\n" +
			"recuperado: e-Ticket A-7 (uuid u1), de la copia del servicio en la nube\n"},
	}
	for _, tt := range tests {
		r := *res
		r.Origen, r.EnCola = tt.origen, tt.queued
		var out bytes.Buffer
		WriteRecovered(&out, &r, tt.running)
		if out.String() != tt.want {
			t.Errorf("%s:\n%s\nwant\n%s", tt.name, out.String(), tt.want)
		}
	}
}
