package profiles

import (
	"testing"

	"github.com/cfe-agent/cfe-agent/internal/testtool"
)

// TestEnsureDefault_fullDisk loads an existing configuration from a full
// filesystem: nothing needs to be written, so nothing fails.
func TestEnsureDefault_fullDisk(t *testing.T) {
	t.Parallel()
	dir := testtool.MountTmpfs(t, "1m")
	if _, created, err := EnsureDefault(dir); err != nil || !created {
		t.Fatalf("first EnsureDefault: created %v, %v", created, err)
	}
	testtool.FillDisk(t, dir)
	cfg, created, err := EnsureDefault(dir)
	if err != nil || created || cfg.Active != "sandbox" {
		t.Fatalf("EnsureDefault on a full disk: created %v, %v", created, err)
	}
}
