package app

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRunFileOfPID: the lock holder's module is found by its pid among
// every profile's run files; another pid, a run file without a base URL and
// a damaged one find nothing.
func TestRunFileOfPID(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := WriteRunFile(dir, "prueba", RunInfo{PID: 101, BaseURL: "http://127.0.0.1:18787"}); err != nil {
		t.Fatal(err)
	}
	if err := WriteRunFile(dir, "tienda", RunInfo{PID: 202, BaseURL: "http://127.0.0.1:18788"}); err != nil {
		t.Fatal(err)
	}
	if err := WriteRunFile(dir, "vacio", RunInfo{PID: 303}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "run", "roto.json"), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	locate := RunFileOfPID(dir)
	if url, ok := locate(202); !ok || url != "http://127.0.0.1:18788" {
		t.Errorf("locate(202) = %q, %v; want the tienda profile's module", url, ok)
	}
	if url, ok := locate(101); !ok || url != "http://127.0.0.1:18787" {
		t.Errorf("locate(101) = %q, %v; want the prueba profile's module", url, ok)
	}
	for _, pid := range []int{303, 404} {
		if url, ok := locate(pid); ok {
			t.Errorf("locate(%d) = %q; want nothing", pid, url)
		}
	}
	if url, ok := RunFileOfPID(filepath.Join(dir, "no-such"))(101); ok {
		t.Errorf("a data directory without run files located %q", url)
	}
}
