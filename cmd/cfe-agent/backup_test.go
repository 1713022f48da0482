package main_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
	"github.com/cfe-agent/cfe-agent/localapi/localclient"
	"github.com/cfe-agent/cfe-agent/signer"
	"github.com/cfe-agent/cfe-agent/store"
)

// verifyChecks check every record of a backup, signatures included, as the
// agent does.
var verifyChecks = store.RecordChecks{Signature: func(xml []byte) (string, error) {
	v, err := signer.Verify(xml, signer.VerifyOptions{})
	if err != nil {
		return "", err
	}
	return v.DigestValue, nil
}}

// withBackupKeys writes the default configuration (first run) and gives the
// default profile automatic backups into folder.
func withBackupKeys(t *testing.T, env []string, dataDir, keys string) {
	t.Helper()
	if out, code := runCLI(t, env, "profile", "show"); code != 0 {
		t.Fatalf("profile show: exit %d\n%s", code, out)
	}
	cfgFile := filepath.Join(dataDir, "config.yaml")
	cfg, err := os.ReadFile(cfgFile)
	if err != nil {
		t.Fatal(err)
	}
	edited := bytes.Replace(cfg, []byte("\n    hosted:"), []byte("\n    backup:\n"+keys+"    hosted:"), 1)
	if bytes.Equal(edited, cfg) {
		t.Fatal("the default config.yaml has no hosted: section to put backup: before")
	}
	if err := os.WriteFile(cfgFile, edited, 0o600); err != nil {
		t.Fatal(err)
	}
}

// autoBackups lists the automatic backups in folder, oldest first.
func autoBackups(t *testing.T, folder string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(folder, "cfe-agent-sandbox-*-auto.db"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// waitFor polls cond for up to 20 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	if !testtool.WaitUntil(t, 20*time.Second, cond) {
		t.Fatalf("timed out waiting for %s", what)
	}
}

func fileSum(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// TestAgent_BackupAndRestore runs the whole cycle on the real agent: an
// automatic backup at start, "cfe-agent backup" through the running agent
// while four clients sign, backups after every N CFEs with rotation, the
// last backup in /state and doctor, a backup with the agent stopped, and
// "cfe-agent restore" of the backup taken under load: refused while behind,
// accepted once the numbers used since are confirmed, and the next
// signature takes the number after them.
func TestAgent_BackupAndRestore(t *testing.T) {
	dataDir := t.TempDir()
	folder := filepath.Join(t.TempDir(), "segundo-disco")
	env := agentEnv("CFE_AGENT_DATA_DIR=" + dataDir)
	withBackupKeys(t, env, dataDir, "      folder: "+folder+"\n      keep: 2\n      every_n: 5\n")
	a := startAgent(t, env, "--listen", "127.0.0.1:0")
	client, err := localclient.New(a.baseURL, localclient.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	// No backup in the folder yet: one is taken at start.
	waitFor(t, "the start-up automatic backup", func() bool { return len(autoBackups(t, folder)) == 1 })
	startup := autoBackups(t, folder)[0]
	if _, err := store.VerifyBackup(startup, verifyChecks); err != nil {
		t.Fatalf("the automatic backup does not verify: %v", err)
	}

	// Four clients sign while a backup is asked of the running agent.
	signTickets(t, a.baseURL, "antes", 1, 3)
	var mu sync.Mutex
	acked := map[string]int64{}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				uuid := fmt.Sprintf("carga-%d-%d", g, i)
				res := signTicket(t, a.baseURL, uuid)
				if res["codigo_respuesta"] != "00" {
					t.Errorf("sign %s: %v %v", uuid, res["codigo_respuesta"], res["mensaje_respuesta"])
					return
				}
				mu.Lock()
				acked[uuid] = int64(res["numero"].(float64))
				mu.Unlock()
			}
		})
	}
	waitFor(t, "the load to start", func() bool { mu.Lock(); defer mu.Unlock(); return len(acked) >= 8 })
	mu.Lock()
	before := map[string]int64{}
	for u, n := range acked {
		before[u] = n
	}
	mu.Unlock()
	underLoad := filepath.Join(t.TempDir(), "copia-bajo-carga.db")
	out, code := runCLI(t, env, "backup", "-o", underLoad)
	mu.Lock()
	during := len(acked)
	mu.Unlock()
	waitFor(t, "signatures after the backup", func() bool { mu.Lock(); defer mu.Unlock(); return len(acked) >= during+8 })
	close(stop)
	wg.Wait()
	if code != 0 || !strings.Contains(out, "copia de seguridad verificada: "+underLoad) {
		t.Fatalf("backup under load: exit %d\n%s", code, out)
	}
	if left, _ := filepath.Glob(filepath.Join(dataDir, "backups", "sandbox", "sandbox", "*")); len(left) != 0 {
		t.Fatalf("-o left the agent's own copy behind: %v", left)
	}
	info, err := store.VerifyBackup(underLoad, verifyChecks)
	if err != nil {
		t.Fatal(err)
	}
	var copied int64
	for _, c := range info.Counters {
		if c.Type == cfe.ETicket && c.Serie == "A" {
			copied = c.Last
		}
	}
	var top int64
	for _, n := range acked {
		top = max(top, n)
	}
	if copied < 3 || copied >= top {
		t.Fatalf("the backup taken under load holds e-Tickets up to A-%d; acknowledged: up to A-%d", copied, top)
	}
	func() {
		db, err := store.Open(underLoad, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		for u, n := range before {
			if got, err := db.FindByUUID(ctx, u); err != nil || got.Nro != n {
				t.Fatalf("%s (A-%d) was acknowledged before the backup and is not in it: %v", u, n, err)
			}
		}
		for n := int64(1); n <= copied; n++ { // a prefix: every number up to the copy's counter, none above
			if _, err := db.FindByNumber(ctx, cfe.ETicket, "A", n); err != nil {
				t.Fatalf("A-%d is missing from the backup that reaches A-%d: %v", n, copied, err)
			}
		}
		if _, err := db.FindByNumber(ctx, cfe.ETicket, "A", copied+1); cfe.ErrorCode(err) != cfe.ENOTFOUND {
			t.Fatalf("A-%d is above the backup's counter but in it: %v", copied+1, err)
		}
	}()

	// Every 5 signatures: another automatic backup; the newest 2 are kept.
	for round := range 2 {
		files := autoBackups(t, folder)
		newest := files[len(files)-1]
		for i := range 5 {
			res := signTicket(t, a.baseURL, fmt.Sprintf("cada-n-%d-%d", round, i))
			if res["codigo_respuesta"] != "00" {
				t.Fatalf("sign: %v", res["mensaje_respuesta"])
			}
			top = max(top, int64(res["numero"].(float64)))
		}
		waitFor(t, "a backup after 5 more signatures", func() bool {
			files := autoBackups(t, folder)
			return files[len(files)-1] != newest
		})
	}
	waitFor(t, "rotation to the two newest automatic backups", func() bool {
		files := autoBackups(t, folder)
		return len(files) == 2 && !slices.Contains(files, startup)
	})
	// A backup still due (a signature's kick queued while one was being
	// taken) may rotate the oldest out while they are checked: a file gone
	// is not a failure, one that does not verify is.
	verified := 0
	for _, f := range autoBackups(t, folder) {
		_, err := store.VerifyBackup(f, verifyChecks)
		if _, statErr := os.Stat(f); errors.Is(statErr, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatalf("automatic backup %s: %v", f, err)
		}
		verified++
	}
	if verified == 0 {
		t.Fatal("no automatic backup left to verify")
	}
	rep, err := client.State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if b := rep.Backup; b == nil || !b.Automaticas || b.Ultima == nil || b.Status != apitype.HealthOK || b.Conservar != 2 || b.CadaN != 5 {
		t.Fatalf("/state backup = %+v", rep.Backup)
	}
	if out, _ := runCLI(t, env, "doctor"); !regexp.MustCompile(`(?m)^OK   copias de seguridad: última .*-auto\.db`).MatchString(out) {
		t.Fatalf("doctor does not report the last automatic backup:\n%s", out)
	}
	if out, code := runCLI(t, env, "restore", underLoad); code == 0 || !strings.Contains(out, "deténgalo") {
		t.Fatalf("restore with the agent running: exit %d\n%s", code, out)
	}
	a.stop(t)

	// With the agent stopped, the command copies the store itself.
	out, code = runCLI(t, env, "backup")
	if code != 0 || !strings.Contains(out, filepath.Join(dataDir, "backups", "sandbox", "sandbox")) {
		t.Fatalf("backup with the agent stopped: exit %d\n%s", code, out)
	}

	// Restore the backup taken under load: behind everything signed since.
	flag := fmt.Sprintf("101:A:%d", top)
	storeSum := fileSum(t, storeFile(dataDir))
	out, code = runCLI(t, env, "restore", underLoad)
	if code == 0 || !strings.Contains(out, "--confirmar-numeros-usados "+flag) {
		t.Fatalf("restore of a backup behind, unconfirmed: exit %d\n%s", code, out)
	}
	out, code = runCLI(t, env, "restore", underLoad, "--confirmar-numeros-usados", fmt.Sprintf("101:A:%d", top-1))
	if code == 0 || !strings.Contains(out, fmt.Sprintf("hasta el %d", top)) {
		t.Fatalf("restore confirming fewer numbers than were used: exit %d\n%s", code, out)
	}
	if fileSum(t, storeFile(dataDir)) != storeSum {
		t.Fatal("a refused restore changed the store")
	}
	out, code = runCLI(t, env, "restore", underLoad, "--confirmar-numeros-usados", flag)
	if code != 0 || !strings.Contains(out, fmt.Sprintf("la numeración sigue en el %d", top+1)) {
		t.Fatalf("confirmed restore: exit %d\n%s", code, out)
	}
	kept, _ := filepath.Glob(storeFile(dataDir) + ".reemplazado-*")
	if len(kept) != 1 || fileSum(t, kept[0]) != storeSum {
		t.Fatalf("the replaced store is not kept under a dated name: %v", kept)
	}

	// No number twice: the next e-Ticket is the one after everything used.
	a = startAgent(t, env, "--listen", "127.0.0.1:0")
	res := signTicket(t, a.baseURL, "despues-de-restaurar")
	if res["codigo_respuesta"] != "00" || res["numero"] != float64(top+1) {
		t.Fatalf("first signature after the restore: %v %v A-%v, want A-%d", res["codigo_respuesta"], res["mensaje_respuesta"], res["numero"], top+1)
	}
	a.stop(t)
}

// TestAgent_AutomaticBackups: the period counts from the newest automatic
// backup in the folder, across restarts; a backup that cannot be written is
// reported (amber: /health degraded, doctor WARN) and not left half-written.
func TestAgent_AutomaticBackups(t *testing.T) {
	stamp := func(ago time.Duration) string {
		return "cfe-agent-sandbox-" + time.Now().Add(-ago).UTC().Format("20060102T150405.000Z") + "-auto.db"
	}
	for _, tc := range []struct {
		name     string
		existing string // a backup already in the folder
		wantNew  bool
	}{
		{"fresh backup in the folder: none at start", stamp(time.Hour), false},
		{"backup older than the period: one at start", stamp(25 * time.Hour), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dataDir := t.TempDir()
			folder := t.TempDir()
			if err := os.WriteFile(filepath.Join(folder, tc.existing), []byte("copia anterior"), 0o600); err != nil {
				t.Fatal(err)
			}
			env := agentEnv("CFE_AGENT_DATA_DIR=" + dataDir)
			withBackupKeys(t, env, dataDir, "      folder: "+folder+"\n      period: 24h\n")
			a := startAgent(t, env, "--listen", "127.0.0.1:0")
			defer a.stop(t)
			c, err := localclient.New(a.baseURL, localclient.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantNew {
				waitFor(t, "a backup at start", func() bool { return len(autoBackups(t, folder)) == 2 })
			} else {
				time.Sleep(500 * time.Millisecond) // a backup at start would be written by now
				if n := len(autoBackups(t, folder)); n != 1 {
					t.Fatalf("%d automatic backups, want only the existing fresh one", n)
				}
			}
			rep, err := c.State(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if b := rep.Backup; b == nil || b.Status != apitype.HealthOK || b.Ultima == nil || b.PeriodoS != 24*3600 ||
				(tc.wantNew == (filepath.Base(b.Ultima.Archivo) == tc.existing)) {
				t.Fatalf("/state backup = %+v (%+v)", rep.Backup, rep.Backup.Ultima)
			}
			if rep.Status != apitype.HealthOK {
				t.Fatalf("/health %s: %q", rep.Status, rep.Warnings)
			}
		})
	}

	t.Run("folder cannot be written: reported, amber", func(t *testing.T) {
		dataDir := t.TempDir()
		notADir := filepath.Join(t.TempDir(), "archivo")
		if err := os.WriteFile(notADir, []byte("no es una carpeta"), 0o600); err != nil {
			t.Fatal(err)
		}
		env := agentEnv("CFE_AGENT_DATA_DIR=" + dataDir)
		withBackupKeys(t, env, dataDir, "      folder: "+notADir+"\n")
		a := startAgent(t, env, "--listen", "127.0.0.1:0")
		defer a.stop(t)
		c, err := localclient.New(a.baseURL, localclient.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var rep *apitype.StateReport
		waitFor(t, "the failed backup in /state", func() bool {
			rep, err = c.State(context.Background())
			return err == nil && rep.Backup != nil && rep.Backup.Error != ""
		})
		if rep.Status != apitype.HealthDegraded || !strings.Contains(strings.Join(rep.Warnings, "\n"), "la última copia de seguridad falló") {
			t.Fatalf("/health %s, warnings %q", rep.Status, rep.Warnings)
		}
		if out, _ := runCLI(t, env, "doctor"); !strings.Contains(out, "WARN copias de seguridad: la última falló") {
			t.Fatalf("doctor:\n%s", out)
		}
	})
}
