// Command packaging writes the installers' generated files for
// scripts/dist.sh: the agent's icon as a Windows ICO (the MSI's shortcut and
// Add/Remove Programs entry) and as a PNG (the .deb's hicolor icon), drawn by
// assets like the tray's. Its tests (TestMSI, TestDeb) check the artifacts
// that make dist builds.
//
//	go run ./packaging icons DIR   # writes DIR/cfe-agent.ico and DIR/cfe-agent.png
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/cfe-agent/cfe-agent/assets"
)

func main() {
	if len(os.Args) != 3 || os.Args[1] != "icons" {
		fmt.Fprintln(os.Stderr, "usage: go run ./packaging icons DIR")
		os.Exit(2)
	}
	if err := writeIcons(os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "packaging:", err)
		os.Exit(1)
	}
}

// writeIcons writes cfe-agent.ico and cfe-agent.png into dir.
func writeIcons(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "cfe-agent.ico"), assets.IconICO(assets.IconOK), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "cfe-agent.png"), assets.IconPNG(assets.IconOK), 0o644)
}
