package durable

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/windows"
)

// holdExclusive opens path sharing nothing, as a file being replaced is held,
// and returns the function that closes it.
func holdExclusive(t *testing.T, path string) func() {
	t.Helper()
	name, err := windows.UTF16PtrFromString(path)
	if err != nil {
		t.Fatal(err)
	}
	h, err := windows.CreateFile(name, windows.GENERIC_READ, 0, nil, windows.OPEN_EXISTING, windows.FILE_ATTRIBUTE_NORMAL, 0)
	if err != nil {
		t.Fatal(err)
	}
	return func() { _ = windows.CloseHandle(h) }
}

// Serial: a file held for 200 ms must be released within the retries' second;
// alone in the binary the test is not starved of it.
func TestReadFile_windows(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	want := []byte("active: sandbox\n")
	if err := os.WriteFile(path, want, 0o600); err != nil {
		t.Fatal(err)
	}

	t.Run("a file held for an instant is read once released", func(t *testing.T) {
		release := holdExclusive(t, path)
		if _, err := os.ReadFile(path); !errors.Is(err, windows.ERROR_SHARING_VIOLATION) {
			release()
			t.Fatalf("os.ReadFile of a held file: %v, want a sharing violation (else this test proves nothing)", err)
		}
		timer := time.AfterFunc(200*time.Millisecond, release)
		defer timer.Stop()
		got, err := ReadFile(path)
		if err != nil || string(got) != string(want) {
			t.Fatalf("ReadFile = %q, %v; want %q", got, err, want)
		}
	})

	t.Run("a file held for good fails with the sharing violation", func(t *testing.T) {
		release := holdExclusive(t, path)
		defer release()
		if _, err := ReadFile(path); !errors.Is(err, windows.ERROR_SHARING_VIOLATION) {
			t.Fatalf("ReadFile of a file held throughout: %v, want ERROR_SHARING_VIOLATION", err)
		}
	})

	t.Run("a missing file fails at once as not found", func(t *testing.T) {
		if _, err := ReadFile(path + ".missing"); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("ReadFile of a missing file: %v, want not found", err)
		}
	})
}
