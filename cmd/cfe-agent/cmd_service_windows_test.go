package main

import (
	"errors"
	"testing"

	"github.com/cfe-agent/cfe-agent/cfe"
)

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
