package console

import (
	"os"
	"testing"

	"golang.org/x/sys/windows"
)

// TestSetup_missingOutput: an output handle the process was started without
// (Explorer, the service manager) is opened on NUL, so that writes to it
// succeed and go nowhere; a valid one (the pipe go test reads) is left as it
// is. It changes the process's standard handles, so it does not run in
// parallel; it puts them back.
func TestSetup_missingOutput(t *testing.T) {
	stdout, stderr := os.Stdout, os.Stderr
	errHandle, err := windows.GetStdHandle(windows.STD_ERROR_HANDLE)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = windows.SetStdHandle(windows.STD_ERROR_HANDLE, errHandle)
		os.Stdout, os.Stderr = stdout, stderr
	})
	if !validHandle(windows.STD_OUTPUT_HANDLE) {
		t.Fatal("the test's stdout (go test's pipe) is not a valid handle")
	}
	if err := windows.SetStdHandle(windows.STD_ERROR_HANDLE, windows.InvalidHandle); err != nil {
		t.Fatal(err)
	}
	if validHandle(windows.STD_ERROR_HANDLE) {
		t.Fatal("an invalid stderr handle reads as valid")
	}

	Setup(false)
	replaced := os.Stderr
	if os.Stdout != stdout {
		t.Error("Setup replaced a valid stdout")
	}
	if replaced == stderr || replaced.Name() != os.DevNull {
		t.Fatalf("stderr without a handle is %q, want it opened on %s", replaced.Name(), os.DevNull)
	}
	if _, err := replaced.WriteString("nadie lo lee\n"); err != nil {
		t.Errorf("a write to the replaced stderr failed: %v", err)
	}
	_ = replaced.Close()
}
