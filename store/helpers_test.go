package store_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/store"
)

// TestMain lets the test binary act as a helper process: a second agent that
// holds the file, or a crashing agent. See helperMain.
func TestMain(m *testing.M) {
	if role := os.Getenv(helperEnv); role != "" {
		os.Exit(helperMain(role))
	}
	os.Exit(m.Run())
}

const helperEnv = "CFE_STORE_TEST_HELPER"

func helperMain(role string) int {
	path := os.Getenv("CFE_STORE_TEST_PATH")
	switch role {
	case "hold":
		return holdMain(path)
	case "crash":
		return crashMain(path, os.Getenv("CFE_STORE_TEST_RUN"))
	case "firststart":
		return firstStartMain(path)
	case "backup":
		return backupMain(path, os.Getenv("CFE_STORE_TEST_DEST"))
	case "openkill":
		return openKillMain(path)
	}
	fmt.Fprintln(os.Stderr, "unknown helper role", role)
	return 2
}

// unavailable ends a test that cannot run here because the machine lacks
// what it needs (a kernel feature, a file system): skipped with the reason,
// or failed under CFE_STRICT_TOOLS=1, as testtool.Require does for a
// missing tool.
func unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv("CFE_STRICT_TOOLS") == "1" {
		t.Fatalf("%s (CFE_STRICT_TOOLS=1)", msg)
	}
	t.Skipf("%s; set CFE_STRICT_TOOLS=1 to make this a failure", msg)
}

// waitFor polls cond until it holds, and fails the test, naming what it
// waited for, when it does not within the time given.
func waitFor(t testing.TB, what string, within time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.NewTimer(within)
	defer deadline.Stop()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-deadline.C:
			t.Fatalf("waited %v for %s", within, what)
		case <-tick.C:
		}
	}
}

// outcomeWithin bounds the wait for the outcome of a call running in its own
// goroutine (a commit waiting for its turn, for instance): far above any
// outcome the store owes, it only keeps a broken test from hanging.
const outcomeWithin = time.Minute

// outcome returns what arrives on done, and fails the test, naming what it
// waited for, when nothing does within outcomeWithin.
func outcome(t testing.TB, done <-chan error, what string) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(outcomeWithin):
		t.Fatalf("waited %v for %s", outcomeWithin, what)
		return nil
	}
}

// helperLimit bounds the life of a helper process: the tests end theirs
// sooner, and one that hangs is killed then, which ends the test's read of
// its output.
const helperLimit = 2 * time.Minute

// helperCommand returns the command that runs this test binary as the
// helper process of role (helperMain), with env added to the test's
// environment (nothing is set in the test's own, so that tests run side by
// side). The process is killed after helperLimit; expired reports whether
// it was.
func helperCommand(t testing.TB, role string, env ...string) (cmd *exec.Cmd, expired func() bool) {
	t.Helper()
	limit, cancel := context.WithTimeout(context.Background(), helperLimit)
	t.Cleanup(cancel)
	cmd = exec.CommandContext(limit, os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), helperEnv+"="+role), env...)
	return cmd, func() bool { return errors.Is(limit.Err(), context.DeadlineExceeded) }
}

var (
	ctx = context.Background()
	// today is the business day of most tests; signAt is a signature time on it.
	today  = cfe.Date{Year: 2026, Month: time.March, Day: 10}
	signAt = time.Date(2026, time.March, 10, 12, 30, 0, 0, cfe.Montevideo)
	// farAway is an expiry date far from today.
	farAway = cfe.Date{Year: 2027, Month: time.December, Day: 31}
)

// newRange returns a valid range as DGI's CAE file would describe it.
func newRange(t cfe.Type, serie string, dnro, hnro int64, expires cfe.Date) cfe.CAERange {
	return cfe.CAERange{RUC: "219999830019", Type: t, Serie: serie, DNro: dnro, HNro: hnro,
		CAEID: "90260012345", Autorizado: cfe.Date{Year: 2025, Month: time.January, Day: 2},
		Vencimiento: expires, Source: "manual"}
}

// openStore opens a store in a fresh directory and closes it at the end of the
// test, then checks the file with bbolt's own consistency check (boltCheck).
func openStore(t testing.TB, opts store.Options) (*store.DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "agent.db")
	db, err := store.Open(path, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	checkAtEnd(t, db, path)
	return db, path
}

// checkAtEnd closes db at the end of the test, then checks its file at path
// with bbolt's own consistency check (boltCheck), unless db found the file
// damaged (a test that damaged it on purpose: bbolt's check would fault).
func checkAtEnd(t testing.TB, db *store.DB, path string) {
	t.Helper()
	t.Cleanup(func() {
		_ = db.Close()
		if db.Damaged() != nil {
			return
		}
		boltCheck(t, path)
	})
}

// boltCheck fails the test unless the bbolt file at path, if it still
// exists, passes bbolt's tx.Check: every page reachable once, the freelist
// and the page tree consistent.
func boltCheck(t testing.TB, path string) {
	t.Helper()
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return // the test removed or moved the file
	}
	bdb, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Errorf("bbolt check of %s: open: %v", path, err)
		return
	}
	defer bdb.Close()
	err = bdb.View(func(tx *bolt.Tx) error {
		for err := range tx.Check() {
			return err
		}
		return nil
	})
	if err != nil {
		t.Errorf("bbolt check of %s: %v", path, err)
	}
}

func putRanges(t testing.TB, db *store.DB, rs ...cfe.CAERange) {
	t.Helper()
	for _, r := range rs {
		if err := db.PutRange(ctx, r); err != nil {
			t.Fatalf("PutRange %v-%s-%d: %v", r.Type, r.Serie, r.DNro, err)
		}
	}
}

// issuedFor builds the signed CFE of reservation r, as the issuer would: a
// distinct XML body per uuid and number.
func issuedFor(r *cfe.Reservation, uuid string, at time.Time) *cfe.Issued {
	xml := fmt.Sprintf(`<CFE version="1.0" xmlns="http://cfe.dgi.gub.uy"><eTck><Encabezado><IdDoc>`+
		`<TipoCFE>%d</TipoCFE><Serie>%s</Serie><Nro>%d</Nro></IdDoc></Encabezado></eTck><!-- %s --></CFE>`,
		int(r.Type), r.Serie, r.Nro, uuid)
	sum := sha256.Sum256([]byte(uuid))
	return &cfe.Issued{UUID: uuid, Type: r.Type, Serie: r.Serie, Nro: r.Nro, RangeID: r.Range.ID,
		CAE: r.Range.CAEData(), TmstFirma: at, XML: []byte(xml), Adenda: "Gracias por su compra",
		CodSeguridad: "a1B2c3", DatosQR: "https://www.efactura.dgi.gub.uy/consultaQR/cfe?" + uuid,
		Total: decimal.RequireFromString("1220.50"), RequestHash: hex.EncodeToString(sum[:])}
}

// issue reserves the next number of type t and commits a CFE under uuid.
func issue(t testing.TB, db *store.DB, typ cfe.Type, uuid string) *cfe.Issued {
	t.Helper()
	r, err := db.Reserve(ctx, typ, today)
	if err != nil {
		t.Fatalf("Reserve %d: %v", typ, err)
	}
	doc := issuedFor(r, uuid, signAt)
	if err := db.Commit(ctx, r, doc); err != nil {
		t.Fatalf("Commit %s: %v", uuid, err)
	}
	return doc
}

func reserve(t testing.TB, db *store.DB, typ cfe.Type) *cfe.Reservation {
	t.Helper()
	r, err := db.Reserve(ctx, typ, today)
	if err != nil {
		t.Fatalf("Reserve %d: %v", typ, err)
	}
	return r
}

// wantCode fails unless err is a *cfe.Error with code.
func wantCode(t testing.TB, err error, code string) *cfe.Error {
	t.Helper()
	var ce *cfe.Error
	if !errors.As(err, &ce) || ce.Code != code {
		t.Fatalf("error = %v, want a *cfe.Error with code %q", err, code)
	}
	return ce
}

// sameIssued fails unless got holds what want held when it was committed
// (the delivery state is the store's, and checked separately).
func sameIssued(t testing.TB, got, want *cfe.Issued) {
	t.Helper()
	switch {
	case got.UUID != want.UUID, got.Type != want.Type, got.Serie != want.Serie, got.Nro != want.Nro,
		got.RangeID != want.RangeID, got.CAE != want.CAE, !got.TmstFirma.Equal(want.TmstFirma),
		!bytes.Equal(got.XML, want.XML), got.Adenda != want.Adenda, got.CodSeguridad != want.CodSeguridad,
		got.DatosQR != want.DatosQR, !got.Total.Equal(want.Total), got.RequestHash != want.RequestHash:
		t.Fatalf("stored CFE differs:\n got %+v\nwant %+v", got, want)
	}
}

// checkFile reads the bbolt file directly, independently of the store's own
// reading code, and checks the invariants of its layout: each sequence's
// numbers are consecutive from 1 up to its counter (the tests that use it
// have ranges starting at 1), every
// CFE is in both indexes, and nothing else is. It returns the uuids by number
// key ("101/A/0000042").
func checkFile(t testing.TB, path string) map[string]string {
	t.Helper()
	bdb, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatalf("open raw: %v", err)
	}
	defer bdb.Close()
	byNumber := map[string]string{}
	err = bdb.View(func(tx *bolt.Tx) error {
		counters := map[string]int64{}
		err := tx.Bucket([]byte("counters")).ForEach(func(k, v []byte) error {
			var c struct{ Last int64 }
			if err := json.Unmarshal(v, &c); err != nil {
				return err
			}
			counters[string(k)] = c.Last
			return nil
		})
		if err != nil {
			return err
		}
		nums := map[string][]int64{}
		err = tx.Bucket([]byte("by_number")).ForEach(func(k, v []byte) error {
			i := strings.LastIndexByte(string(k), '/')
			var n int64
			if _, err := fmt.Sscanf(string(k[i+1:]), "%d", &n); err != nil {
				return err
			}
			nums[string(k[:i])] = append(nums[string(k[:i])], n)
			byNumber[string(k)] = string(v)
			return nil
		})
		if err != nil {
			return err
		}
		for seq, ns := range nums {
			if !slices.IsSorted(ns) {
				return fmt.Errorf("%s: numbers out of order", seq)
			}
			for i, n := range ns {
				if want := int64(i) + 1; n != want {
					return fmt.Errorf("%s: gap: number %d where %d was due", seq, n, want)
				}
			}
			if last := ns[len(ns)-1]; counters[seq] != last {
				return fmt.Errorf("%s: counter %d, highest number %d", seq, counters[seq], last)
			}
		}
		var cfes, byTime int
		err = tx.Bucket([]byte("cfes")).ForEach(func(k, v []byte) error {
			cfes++
			var rec struct {
				Type  int
				Serie string
				Nro   int64
			}
			if err := json.Unmarshal(v, &rec); err != nil {
				return err
			}
			key := fmt.Sprintf("%03d/%s/%07d", rec.Type, rec.Serie, rec.Nro)
			if byNumber[key] != string(k) {
				return fmt.Errorf("cfe %s (%s) is not in by_number", k, key)
			}
			return nil
		})
		if err != nil {
			return err
		}
		err = tx.Bucket([]byte("by_time")).ForEach(func(k, v []byte) error {
			byTime++
			if byNumber[string(k[strings.IndexByte(string(k), '|')+1:])] != string(v) {
				return fmt.Errorf("by_time %s points to %s", k, v)
			}
			return nil
		})
		if err != nil {
			return err
		}
		if cfes != len(byNumber) || byTime != len(byNumber) {
			return fmt.Errorf("%d cfes, %d in by_number, %d in by_time", cfes, len(byNumber), byTime)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("file %s: %v", path, err)
	}
	return byNumber
}

// commitTransactions returns how many commit transactions db has written.
func commitTransactions(t testing.TB, db *store.DB) uint64 {
	t.Helper()
	st, err := db.Stats(ctx)
	if err != nil {
		t.Fatalf("Stats: %v", err)
	}
	return st.CommitTransactions
}
