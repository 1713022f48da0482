//go:build unix

package instance

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// TestFreeForService: while an agent holds the data directory's lock the
// service is refused naming the tray and the folder; once it is free the
// check passes and does not keep the lock; a folder without a run folder
// (no agent ever ran there) is no refusal.
func TestFreeForService(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "run"), 0o700); err != nil {
		t.Fatal(err)
	}
	release, err := Lock(dir)
	if err != nil {
		t.Fatal(err)
	}
	err = FreeForService(dir)
	if cfe.ErrorCode(err) != cfe.EUNAVAILABLE || !strings.Contains(cfe.ErrorMessage(err), "cierre el agente de la bandeja") ||
		!strings.Contains(cfe.ErrorMessage(err), dir) {
		t.Errorf("FreeForService with the lock held = %v, want the refusal naming the tray and %s", err, dir)
	}
	release()
	if err := FreeForService(dir); err != nil {
		t.Fatalf("FreeForService with the lock free = %v", err)
	}
	again, err := Lock(dir)
	if err != nil {
		t.Fatalf("FreeForService kept the lock: %v", err)
	}
	again()
	if err := FreeForService(filepath.Join(dir, "nunca")); err != nil {
		t.Errorf("FreeForService of a folder no agent used = %v", err)
	}
}
