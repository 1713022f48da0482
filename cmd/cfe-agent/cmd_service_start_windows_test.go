package main

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/instance"
)

// TestCheckInstanceFree: "service start" refuses while a (tray) agent holds
// the service's data directory, naming the tray, and lets it start once the
// directory is free, without keeping the lock itself.
func TestCheckInstanceFree(t *testing.T) {
	// Only the path names the mutex: no directory is created (Wine 8
	// cannot remove t.TempDir's).
	dir := fmt.Sprintf(`C:\cfe-agent-test\%s-%d`, t.Name(), time.Now().UnixNano())
	release, err := instance.Lock(dir)
	if err != nil {
		t.Fatal(err)
	}
	err = checkInstanceFree(dir)
	if cfe.ErrorCode(err) != cfe.EUNAVAILABLE || !strings.Contains(cfe.ErrorMessage(err), "cierre el agente de la bandeja") ||
		!strings.Contains(cfe.ErrorMessage(err), dir) {
		t.Errorf("checkInstanceFree with the lock held = %v, want the refusal naming the tray and %s", err, dir)
	}
	release()
	if err := checkInstanceFree(dir); err != nil {
		t.Fatalf("checkInstanceFree with the lock free = %v", err)
	}
	again, err := instance.Lock(dir)
	if err != nil {
		t.Fatalf("checkInstanceFree kept the lock: %v", err)
	}
	again()
}

// TestDescribedError: the service's error (for the Event Log) is the
// Spanish description and still unwraps to the cause.
func TestDescribedError(t *testing.T) {
	cause := &cfe.Error{Code: cfe.EINVALID, Op: "config", Message: "la configuración no es válida"}
	err := describedError{cause}
	if err.Error() != "la configuración no es válida" {
		t.Errorf("Error() = %q", err.Error())
	}
	var ce *cfe.Error
	if !errors.As(err, &ce) || ce != cause {
		t.Error("describedError does not unwrap to its cause")
	}
}
