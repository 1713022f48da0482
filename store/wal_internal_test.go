package store

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// TestOpenCommitLog_GapRefused: records above the last checkpoint that do
// not follow it without a gap (one lost between the two log files) are
// refused as damage naming the missing record, never replayed around the
// hole; the same records without the gap are replayed.
func TestOpenCommitLog_GapRefused(t *testing.T) {
	t.Parallel()
	id := [walIDLen]byte{1, 2, 3}
	var codec xmlCodec
	entry := func(lsn uint64, nro int64) *walEntry {
		xml := []byte("<CFE><Nro>" + strings.Repeat("x", int(nro)) + "</Nro></CFE>")
		z, err := codec.encode(xml)
		if err != nil {
			t.Fatal(err)
		}
		rec := &issuedRecord{UUID: "u-" + strings.Repeat("1", int(nro)), Type: cfe.ETicket, Serie: "A", Nro: nro,
			CAE:       caeRecord{CAEID: "90269991010", DNro: 1, HNro: 100, FecVenc: cfe.Date{Year: 2027, Month: time.January, Day: 1}},
			TmstFirma: time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC), Total: decimal.NewFromInt(1), zxml: z}
		return &walEntry{lsn: lsn, rec: rec, prev: nro - 1}
	}
	write := func(t *testing.T, path string, entries ...*walEntry) {
		t.Helper()
		var buf []byte
		var err error
		for _, e := range entries {
			if buf, err = encodeWALRecord(buf, id, e, true); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(path, append(buf, make([]byte, 64)...), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	store := filepath.Join(dir, "agent.db")
	wal := WALPaths(store)
	// Checkpointed up to 10: 11 and 12 in the first file, 14 in the second.
	write(t, wal[0], entry(11, 1), entry(12, 2))
	write(t, wal[1], entry(14, 4))
	_, _, _, err := openCommitLog(store, id, 10, time.Now())
	if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "lacks record 13") {
		t.Fatalf("a gap between the log files: %v, want ErrDamaged naming record 13", err)
	}
	// With 13 there, all four are replayed in LSN order.
	write(t, wal[1], entry(13, 3), entry(14, 4))
	l, found, _, err := openCommitLog(store, id, 10, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	defer l.close(false)
	var lsns []uint64
	for _, e := range found {
		lsns = append(lsns, e.lsn)
	}
	if len(lsns) != 4 || lsns[0] != 11 || lsns[3] != 14 {
		t.Fatalf("replayed %v, want 11..14", lsns)
	}
}
