package machinezone

import (
	"os"
	"testing"
	"time"

	"golang.org/x/sys/windows/registry"
)

// TestRead_registry: without TZ the zone is the registry's
// TimeZoneKeyName. It unsets TZ, so it does not run in parallel.
func TestRead_registry(t *testing.T) {
	k, err := registry.OpenKey(registry.LOCAL_MACHINE, `SYSTEM\CurrentControlSet\Control\TimeZoneInformation`, registry.QUERY_VALUE)
	if err != nil {
		t.Fatalf("the registry has no time zone key: %v", err)
	}
	want, _, err := k.GetStringValue("TimeZoneKeyName")
	_ = k.Close()
	if err != nil || want == "" {
		t.Fatalf("the registry names no zone: %q, %v", want, err)
	}
	t.Setenv("TZ", "") // restored at the end
	if err := os.Unsetenv("TZ"); err != nil {
		t.Fatal(err)
	}
	z := Read(time.Now())
	if z.Source != "registry" || z.Name != want {
		t.Errorf("Read without TZ = %+v, want %s from the registry", z, want)
	}
}
