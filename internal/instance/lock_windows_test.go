package instance

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/windows"
)

// TestLock_windows: the named mutex of a data directory is taken
// once; the same directory spelled in other letter case is the same
// directory; after release it can be taken again; another directory has its
// own.
func TestLock_windows(t *testing.T) {
	// Only the path names the mutex: no directory is created (and Wine 8
	// cannot remove t.TempDir's).
	dir := fmt.Sprintf(`C:\cfe-agent-test\%s-%d`, t.Name(), time.Now().UnixNano())
	release, err := Lock(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Lock(strings.ToUpper(dir)); !errors.Is(err, ErrHeld) {
		t.Fatalf("second lock of %s: %v, want ErrHeld", dir, err)
	}
	other, err := Lock(filepath.Join(dir, "otra"))
	if err != nil {
		t.Fatalf("another directory: %v", err)
	}
	other()
	release()
	again, err := Lock(dir)
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	again()
}

// TestMutexName_finalPath: an existing folder is named by its final
// path, so its 8.3 short name (when the volume has them) and its name in
// other letter case give the same mutex; a folder that cannot be opened
// falls back to its cleaned absolute path.
func TestMutexName_finalPath(t *testing.T) {
	// Not t.TempDir: Wine 8 cannot remove it; best-effort removal instead.
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("cfe-agent carpeta de datos larga %d", time.Now().UnixNano()))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	long := mutexName(dir)
	if got := mutexName(strings.ToUpper(dir) + `\`); got != long {
		t.Errorf("the folder in capitals with a trailing separator: %s, want %s", got, long)
	}
	final, err := finalPath(dir)
	if err != nil || !strings.EqualFold(filepath.Base(final), filepath.Base(dir)) {
		t.Fatalf("finalPath(%s) = %q, %v", dir, final, err)
	}

	long16, err := windows.UTF16PtrFromString(dir)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]uint16, windows.MAX_PATH)
	n, err := windows.GetShortPathName(long16, &buf[0], uint32(len(buf)))
	short := windows.UTF16ToString(buf[:n])
	if err != nil || n == 0 || strings.EqualFold(short, dir) {
		t.Logf("no 8.3 name for %s (%v): only the letter case is compared", dir, err)
	} else if got := mutexName(short); got != long {
		t.Errorf("the 8.3 name %s gives %s, want %s (the long name's)", short, got, long)
	}

	missing := filepath.Join(dir, "no-existe")
	sum := sha256.Sum256([]byte(strings.ToLower(missing)))
	if got, want := mutexName(missing), `Global\cfe-agent-`+hex.EncodeToString(sum[:16]); got != want {
		t.Errorf("a missing folder: %s, want %s (its cleaned path)", got, want)
	}
}
