package instance

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// TestFreeForService_windows: "service start" refuses while a (tray) agent
// holds the service's data directory, naming the tray, and lets it start
// once the directory is free, without keeping the lock itself.
func TestFreeForService_windows(t *testing.T) {
	// Only the path names the mutex: no directory is created (Wine 8
	// cannot remove t.TempDir's).
	dir := fmt.Sprintf(`C:\cfe-agent-test\%s-%d`, t.Name(), time.Now().UnixNano())
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
}
