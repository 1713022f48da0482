//go:build !windows

package console

import (
	"os"
	"testing"
)

// TestSetup_elsewhere: outside Windows the standard files are left as the
// program was started with them, attached or not.
func TestSetup_elsewhere(t *testing.T) {
	t.Parallel()
	in, out, errOut := os.Stdin, os.Stdout, os.Stderr
	Setup(true)
	Setup(false)
	if os.Stdin != in || os.Stdout != out || os.Stderr != errOut {
		t.Error("Setup replaced a standard file")
	}
}
