package main_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/store"
)

// Issue 28, item 2, over the real binaries: "cfe-agent restore" refuses a
// tampered backup, another installation's backup (unless the technician
// names it), and a backup whose numbers the hosted service holds with other
// documents; "cfe-agent backup" refuses to keep a backup of a store with a
// damaged record. (A backup behind the numbers used since is refused
// unless they are confirmed: TestAgent_BackupAndRestore.)

// machineEnv is the environment of an agent of data directory dataDir on a
// machine of its own: its own HOME and XDG folders, so that two data
// directories of one test share nothing outside them.
func machineEnv(t *testing.T, dataDir string, extra ...string) []string {
	t.Helper()
	home := t.TempDir()
	return agentEnv(append([]string{"CFE_AGENT_DATA_DIR=" + dataDir, "HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share")}, extra...)...)
}

// storedCFE reads, from the bbolt file at path (a store or a backup), the
// stored value of the signed XML of the CFE numbered nro of serie A and its
// uuid and key in the xml bucket.
func storedCFE(t *testing.T, path string, nro int) (uuid string, key, value []byte) {
	t.Helper()
	bdb, err := bolt.Open(path, 0o400, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer bdb.Close()
	err = bdb.View(func(tx *bolt.Tx) error {
		uuid = string(tx.Bucket([]byte("by_number")).Get(fmt.Appendf(nil, "101/A/%07d", nro)))
		var rec struct {
			Seq uint64 `json:"outbox_seq"`
		}
		if err := json.Unmarshal(tx.Bucket([]byte("cfes")).Get([]byte(uuid)), &rec); err != nil {
			return err
		}
		key = binary.BigEndian.AppendUint64(nil, rec.Seq)
		value = bytes.Clone(tx.Bucket([]byte("xml")).Get(key))
		return nil
	})
	if err != nil || len(value) == 0 {
		t.Fatalf("A-%d in %s: %v", nro, path, err)
	}
	return uuid, key, value
}

// signedXMLOf returns the signed XML of uuid, read through the store from
// the file at path (a backup, opened as a store: it reads it only).
func signedXMLOf(t *testing.T, path, uuid string) []byte {
	t.Helper()
	db, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c, err := db.FindByUUID(context.Background(), uuid)
	if err != nil {
		t.Fatal(err)
	}
	return c.XML
}

// TestAgent_RestoreRefusesATamperedBackup: a backup with one record damaged
// (one bit of a stored signed XML flipped; or a signed XML changed and
// stored in a form the store reads, so that only its signature tells) is
// refused by "cfe-agent restore" with a Spanish message naming the CFE; the
// store and the journal are left byte for byte; the intact backup is then
// restored.
func TestAgent_RestoreRefusesATamperedBackup(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	env := machineEnv(t, dataDir)
	a := startAgent(t, env, "--listen", "127.0.0.1:0")
	signTickets(t, a.baseURL, "venta", 1, 4)
	backup := filepath.Join(t.TempDir(), "copia.db")
	if out, code := runCLI(t, env, "backup", "-o", backup); code != 0 || !strings.Contains(out, "copia de seguridad verificada") {
		t.Fatalf("backup: exit %d\n%s", code, out)
	}
	a.stop(t)
	sums := func() [2][32]byte {
		return [2][32]byte{fileSum(t, storeFile(dataDir)), fileSum(t, journalFile(dataDir))}
	}
	before := sums()

	t.Run("one bit flipped", func(t *testing.T) {
		bad := filepath.Join(t.TempDir(), "un-bit.db")
		testtool.CopyFile(t, backup, bad)
		uuid, _, value := storedCFE(t, bad, 2)
		testtool.FlipBitIn(t, bad, value)
		out, code := runCLI(t, env, "restore", bad)
		if code == 0 {
			t.Fatalf("restore of a backup with a bit flipped: exit 0\n%s", out)
		}
		t.Log(out)
		testtool.MustContain(t, "restore", out, "la copia de seguridad "+bad+" tiene 1 registro dañado",
			"e-Ticket serie A número 2 (uuid "+uuid+")", "no se puede usar")
		if sums() != before {
			t.Fatal("a refused restore changed the store or the journal")
		}
	})
	t.Run("a signed XML changed, stored readable", func(t *testing.T) {
		bad := filepath.Join(t.TempDir(), "cambiado.db")
		testtool.CopyFile(t, backup, bad)
		uuid, key, _ := storedCFE(t, bad, 3)
		xml := signedXMLOf(t, bad, uuid)
		changed := bytes.Replace(xml, []byte("Yerba mate 1 kg"), []byte("Yerba mate 5 kg"), 1)
		if bytes.Equal(changed, xml) {
			t.Fatal("the example's item is not in the signed XML")
		}
		// Stored as it is (the store's schema-2 form, without a checksum):
		// the store reads it back exactly as written.
		bdb, err := bolt.Open(bad, 0o600, &bolt.Options{Timeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		err = bdb.Update(func(tx *bolt.Tx) error { return tx.Bucket([]byte("xml")).Put(key, changed) })
		if cerr := bdb.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			t.Fatal(err)
		}
		out, code := runCLI(t, env, "restore", bad)
		if code == 0 {
			t.Fatalf("restore of a backup with a changed XML: exit 0\n%s", out)
		}
		testtool.MustContain(t, "restore", out, "e-Ticket serie A número 3 (uuid "+uuid+")", "su firma XML-DSig no verifica",
			"modificado después de firmarlo")
		if sums() != before {
			t.Fatal("a refused restore changed the store or the journal")
		}
	})
	t.Run("the intact backup", func(t *testing.T) {
		out, code := runCLI(t, env, "restore", backup)
		if code != 0 || !strings.Contains(out, "4 firmas verificadas") {
			t.Fatalf("restore of the intact backup: exit %d\n%s", code, out)
		}
	})
}

// TestAgent_BackupRefusesADamagedStore: "cfe-agent backup" through the
// running agent keeps no backup of a store with a damaged record, and says
// which CFE it is.
func TestAgent_BackupRefusesADamagedStore(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	env := machineEnv(t, dataDir)
	a := startAgent(t, env, "--listen", "127.0.0.1:0")
	signTickets(t, a.baseURL, "venta", 1, 3)
	a.stop(t)
	uuid, _, value := storedCFE(t, storeFile(dataDir), 2)
	testtool.FlipBitIn(t, storeFile(dataDir), value)
	a = startAgent(t, env, "--listen", "127.0.0.1:0") // the page tree is whole: it opens
	defer a.stop(t)
	dest := filepath.Join(t.TempDir(), "copias", "copia.db")
	out, code := runCLI(t, env, "backup", "-o", dest)
	if code == 0 {
		t.Fatalf("backup of a damaged store: exit 0\n%s", out)
	}
	testtool.MustContain(t, "backup", out, "no se guardó la copia de seguridad", "e-Ticket serie A número 2 (uuid "+uuid+")")
	if _, err := os.Stat(dest); !os.IsNotExist(err) {
		t.Fatalf("a backup of a damaged store was kept: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(dataDir, "backups", "sandbox", "sandbox", "*")); len(left) != 0 {
		t.Fatalf("the agent kept a copy: %v", left)
	}
}

// identityRE reads the identity a foreign backup's refusal names.
var identityRE = regexp.MustCompile(`--aceptar-copia-ajena ([0-9a-f]{32})`)

// TestAgent_RestoreForeignBackup: the backup of another data directory of
// the same company and profile is refused, naming both identities and the
// flag; restored once the technician names it; the store it replaced then
// counts as this data directory's (its backup is refused only as behind).
func TestAgent_RestoreForeignBackup(t *testing.T) {
	t.Parallel()
	here, there := t.TempDir(), t.TempDir()
	hereEnv, thereEnv := machineEnv(t, here), machineEnv(t, there)
	a := startAgent(t, hereEnv, "--listen", "127.0.0.1:0")
	signTickets(t, a.baseURL, "aqui", 1, 3)
	a.stop(t)
	own := filepath.Join(t.TempDir(), "propia.db")
	if out, code := runCLI(t, hereEnv, "backup", "-o", own); code != 0 {
		t.Fatalf("backup here: exit %d\n%s", code, out)
	}
	b := startAgent(t, thereEnv, "--listen", "127.0.0.1:0")
	signTickets(t, b.baseURL, "alla", 1, 5)
	b.stop(t)
	foreign := filepath.Join(t.TempDir(), "ajena.db")
	if out, code := runCLI(t, thereEnv, "backup", "-o", foreign); code != 0 {
		t.Fatalf("backup there: exit %d\n%s", code, out)
	}
	ownInfo, err := store.VerifyBackup(own, store.RecordChecks{})
	if err != nil {
		t.Fatal(err)
	}
	foreignInfo, err := store.VerifyBackup(foreign, store.RecordChecks{})
	if err != nil {
		t.Fatal(err)
	}

	storeSum, journalSum := fileSum(t, storeFile(here)), fileSum(t, journalFile(here))
	out, code := runCLI(t, hereEnv, "restore", foreign)
	if code == 0 {
		t.Fatalf("restore of another installation's backup: exit 0\n%s", out)
	}
	testtool.MustContain(t, "restore", out, "es del archivo de datos "+foreignInfo.StoreID,
		"el archivo de datos actual es "+ownInfo.StoreID, "otra instalación", "No se cambió nada",
		"--aceptar-copia-ajena "+foreignInfo.StoreID)
	if fileSum(t, storeFile(here)) != storeSum || fileSum(t, journalFile(here)) != journalSum {
		t.Fatal("a refused restore changed the store or the journal")
	}
	m := identityRE.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no identity to name in:\n%s", out)
	}
	out, code = runCLI(t, hereEnv, "restore", foreign, "--aceptar-copia-ajena", m[1])
	if code != 0 || !strings.Contains(out, "se aceptó con --aceptar-copia-ajena") || !strings.Contains(out, ownInfo.StoreID) {
		t.Fatalf("restore of the named foreign backup: exit %d\n%s", code, out)
	}
	a = startAgent(t, hereEnv, "--listen", "127.0.0.1:0")
	signTickets(t, a.baseURL, "despues", 6, 1) // the foreign copy reached A-5
	a.stop(t)

	// The replaced store is an ancestor now: its backup is this data
	// directory's, refused only because numbers were used since.
	out, code = runCLI(t, hereEnv, "restore", own)
	if code == 0 || !strings.Contains(out, "--confirmar-numeros-usados 101:A:6") || strings.Contains(out, "--aceptar-copia-ajena") {
		t.Fatalf("restore of the replaced store's backup: exit %d\n%s", code, out)
	}
}

// TestAgent_RestoreStaleBackupTheServiceContradicts: a copy of the data
// directory (store and journal, taken after A-3) goes on signing A-4 and
// A-5 with the hosted service unreachable; the agent signs and delivers its
// own. The copy's backup is of this data directory's store (the
// same file, copied) and not behind, but the service holds other documents
// under: "cfe-agent restore" refuses it, naming them, and
// changes nothing. With the service unreachable, the restore says it could
// not compare and goes on (docs/numbering.md).
func TestAgent_RestoreStaleBackupTheServiceContradicts(t *testing.T) {
	t.Parallel()
	sb := startSandbox(t)
	agentDir, copyDir := t.TempDir(), t.TempDir()
	online := machineEnv(t, agentDir, "CFE_AGENT_HOSTED_URL="+sb.URL(), "CFE_AGENT_HOSTED_API_KEY="+agentKey)
	a := startAgent(t, online, "--listen", "127.0.0.1:0")
	signTickets(t, a.baseURL, "tienda", 1, 3)
	waitDelivered(t, a)
	a.stop(t)

	// The copy: the store and the journal, as docs/numbering.md advises to
	// back up; another machine, the service unreachable.
	offline := machineEnv(t, copyDir, "CFE_AGENT_HOSTED_URL=http://127.0.0.1:1", "CFE_AGENT_HOSTED_API_KEY="+agentKey)
	for _, f := range []func(string) string{storeFile, journalFile} {
		if err := os.MkdirAll(filepath.Dir(f(copyDir)), 0o700); err != nil {
			t.Fatal(err)
		}
		testtool.CopyFile(t, f(agentDir), f(copyDir))
	}
	c := startAgent(t, offline, "--listen", "127.0.0.1:0")
	for i := range 2 { // other sales than the agent's
		var req map[string]any
		if err := json.Unmarshal(example(t, "e-ticket.json"), &req); err != nil {
			t.Fatal(err)
		}
		req["uuid"] = fmt.Sprint("copia-", i)
		req["cfe"].(map[string]any)["detalles"].([]any)[0].(map[string]any)["nombreItem"] = "Yerba de la copia"
		body, err := json.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		if res := signCFE(t, c.baseURL, body); res["codigo_respuesta"] != "00" || res["numero"] != float64(4+i) {
			t.Fatalf("the copy signs %v %v A-%v, want A-%d", res["codigo_respuesta"], res["mensaje_respuesta"], res["numero"], 4+i)
		}
	}
	stale := filepath.Join(t.TempDir(), "copia-A-5.db")
	if out, code := runCLI(t, offline, "backup", "-o", stale); code != 0 {
		t.Fatalf("backup of the copy: exit %d\n%s", code, out)
	}
	c.stop(t)

	a = startAgent(t, online, "--listen", "127.0.0.1:0")
	signTickets(t, a.baseURL, "tienda-2", 4, 2)
	waitDelivered(t, a)
	a.stop(t)

	storeSum, journalSum := fileSum(t, storeFile(agentDir)), fileSum(t, journalFile(agentDir))
	out, code := runCLI(t, online, "restore", stale)
	if code == 0 {
		t.Fatalf("restore of a backup the service contradicts: exit 0\n%s", out)
	}
	t.Log(out)
	testtool.MustContain(t, "restore", out, "2 comprobantes distintos de los que el servicio en línea guarda",
		"e-Ticket serie A número 4: la copia tiene el uuid copia-0", "el servicio el uuid tienda-2-0",
		"e-Ticket serie A número 5", "No se cambió nada")
	// Other content, so other signatures: the security codes differ too.
	codes := regexp.MustCompile(`código de seguridad (\S+)\), el servicio el uuid \S+ \(código (\S+)\)`).FindAllStringSubmatch(out, -1)
	if len(codes) != 2 {
		t.Errorf("%d pairs of security codes named, want 2:\n%s", len(codes), out)
	}
	for _, m := range codes {
		if m[1] == m[2] {
			t.Errorf("the same security code %s for different documents:\n%s", m[1], out)
		}
	}
	if strings.Contains(out, "aceptar-copia-ajena") {
		t.Fatalf("the copy of this data directory's own store was taken for another installation's:\n%s", out)
	}
	if fileSum(t, storeFile(agentDir)) != storeSum || fileSum(t, journalFile(agentDir)) != journalSum {
		t.Fatal("a refused restore changed the store or the journal")
	}

	// The service unreachable: said, and the other checks decide.
	down := machineEnv(t, agentDir, "CFE_AGENT_HOSTED_URL=http://127.0.0.1:1", "CFE_AGENT_HOSTED_API_KEY="+agentKey)
	out, code = runCLI(t, down, "restore", stale)
	if code != 0 || !strings.Contains(out, "aviso: no se pudo consultar el servicio en línea") ||
		!strings.Contains(out, "no se comparan los comprobantes de la copia con los del servicio") {
		t.Fatalf("restore with the service unreachable: exit %d\n%s", code, out)
	}
}
