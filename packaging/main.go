// Command packaging writes the installers' generated files for
// scripts/dist.sh: the agent's icon as a Windows ICO (the MSI's shortcut and
// Add/Remove Programs entry) and as a PNG (the .deb's hicolor icon), drawn by
// assets like the tray's, and the .deb's systemd unit, from the same
// service.SystemdUnit that "cfe-agent service install" writes. Its tests
// (TestMSI, TestDeb) check the artifacts that make dist builds.
//
//	go run ./packaging icons DIR   # writes DIR/cfe-agent.ico and DIR/cfe-agent.png
//	go run ./packaging unit DIR    # writes DIR/cfe-agent.service
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/cfe-agent/cfe-agent/assets"
	"github.com/cfe-agent/cfe-agent/service"
)

// packagedService is the .deb's service: /usr/bin/cfe-agent as the system
// user cfe-agent (made by postinst) on /var/lib/cfe-agent, with its
// numbering witness in /var/lib/cfe-agent-witness, both of which systemd
// creates. The texts are the ones "cfe-agent service install" uses.
var packagedService = service.Config{
	Name:           "cfe-agent",
	DisplayName:    "Agente CFE",
	Description:    "firma comprobantes fiscales electrónicos (CFE) y sirve el módulo local a las cajas",
	Exe:            "/usr/bin/cfe-agent",
	DataDir:        "/var/lib/cfe-agent",
	User:           "cfe-agent",
	StateDirectory: "cfe-agent",
	// The numbering witness, outside the data directory: the cfe-agent
	// user's home is its data directory, so the agent uses the folder beside
	// it (profiles.WitnessDir), a second state directory of the unit.
	WitnessDir: "/var/lib/cfe-agent-witness",
}

func main() {
	var write func(string) error
	if len(os.Args) == 3 {
		switch os.Args[1] {
		case "icons":
			write = writeIcons
		case "unit":
			write = writeUnit
		}
	}
	if write == nil {
		fmt.Fprintln(os.Stderr, "usage: go run ./packaging icons|unit DIR")
		os.Exit(2)
	}
	if err := write(os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "packaging:", err)
		os.Exit(1)
	}
}

// writeUnit writes the .deb's cfe-agent.service into dir.
func writeUnit(dir string) error {
	b, err := service.SystemdUnit(packagedService)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, packagedService.Name+".service"), b, 0o644)
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
