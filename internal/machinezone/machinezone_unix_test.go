//go:build !windows

package machinezone

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRead_system: without TZ the zone is the zoneinfo file /etc/localtime
// leads to (through every link), named as zoneinfo names it. It unsets TZ,
// so it does not run in parallel.
func TestRead_system(t *testing.T) {
	if _, err := os.Readlink("/etc/localtime"); err != nil {
		t.Skipf("/etc/localtime is not a link here (%v): the zone is named by /etc/timezone", err)
	}
	target, err := filepath.EvalSymlinks("/etc/localtime")
	if err != nil || !strings.Contains(target, "zoneinfo/") {
		t.Skipf("/etc/localtime does not lead into a zoneinfo folder here (%q, %v)", target, err)
	}
	want := target[strings.Index(target, "zoneinfo/")+len("zoneinfo/"):]
	t.Setenv("TZ", "") // restored at the end
	if err := os.Unsetenv("TZ"); err != nil {
		t.Fatal(err)
	}
	z := Read(time.Now())
	if z.Source != "/etc/localtime" || z.Name != want {
		t.Errorf("Read without TZ = %+v, want %s from /etc/localtime", z, want)
	}
}
