package main_test

import (
	"bytes"
	"debug/pe"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/tc-hib/winres"
	"github.com/tc-hib/winres/version"

	"github.com/cfe-agent/cfe-agent/assets"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
)

// TestWinres_IconIsTheTrayIcon: the executable's icon is the tray's green
// icon. Regenerate it with CFE_UPDATE_WINRES_ICON=1 after changing the icon.
func TestWinres_IconIsTheTrayIcon(t *testing.T) {
	path := filepath.Join("winres", "icon.png")
	want := assets.IconPNG(assets.IconOK)
	if os.Getenv("CFE_UPDATE_WINRES_ICON") == "1" {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is not assets.IconPNG(IconOK): run this test with CFE_UPDATE_WINRES_ICON=1", path)
	}
}

// TestWinres_WindowsExecutable builds cfe-agent.exe as the Makefile does
// ("make windows") and reads its resources back: the icon, the version
// strings carrying the version passed in, the manifest, and the GUI
// subsystem.
func TestWinres_WindowsExecutable(t *testing.T) {
	if testing.Short() {
		t.Skip("cross-compiles the agent for Windows")
	}
	testtool.Require(t, "make")
	const ver = "v7.8.9-3-gdeadbee"
	const numeric = "7.8.12" // NUMERIC_VERSION, as scripts/version.sh MSI_VERSION gives it
	// make writes the resources beside the sources, where a plain
	// "GOOS=windows go build" picks them up: put back what was there.
	syso := filepath.Join(testtool.RepoRoot(t), "cmd", "cfe-agent", "rsrc_windows_amd64.syso")
	prev, prevErr := os.ReadFile(syso)
	t.Cleanup(func() {
		if prevErr == nil {
			_ = os.WriteFile(syso, prev, 0o644)
		} else {
			_ = os.Remove(syso)
		}
	})
	exe := filepath.Join(t.TempDir(), "cfe-agent.exe")
	make := exec.Command("make", "-C", testtool.RepoRoot(t), "windows", "VERSION="+ver, "NUMERIC_VERSION="+numeric, "WINDOWS_EXE="+exe)
	if out, err := make.CombinedOutput(); err != nil {
		t.Fatalf("make windows: %v\n%s", err, out)
	}
	f, err := os.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rs, err := winres.LoadFromEXE(f)
	if err != nil {
		t.Fatalf("reading the resources: %v", err)
	}

	icon, err := rs.GetIcon(winres.Name("APP"))
	if err != nil {
		t.Fatalf("no APP icon: %v", err)
	}
	var ico bytes.Buffer
	if err := icon.SaveICO(&ico); err != nil || ico.Len() < 1000 {
		t.Errorf("the icon does not hold images (%d bytes, %v)", ico.Len(), err)
	}

	var vi *version.Info
	rs.WalkType(winres.RT_VERSION, func(_ winres.Identifier, _ uint16, data []byte) bool {
		vi, err = version.FromBytes(data)
		return false
	})
	if vi == nil || err != nil {
		t.Fatalf("no version resource (%v)", err)
	}
	js, err := json.Marshal(vi)
	if err != nil {
		t.Fatal(err)
	}
	var parsed struct {
		Fixed struct {
			FileVersion    string `json:"file_version"`
			ProductVersion string `json:"product_version"`
		} `json:"fixed"`
		Info map[string]map[string]string `json:"info"`
	}
	if err := json.Unmarshal(js, &parsed); err != nil {
		t.Fatal(err)
	}
	// The file version is the numeric form the MSI also uses; the product
	// version the numeric part of the tag.
	if parsed.Fixed.FileVersion != numeric+".0" || parsed.Fixed.ProductVersion != "7.8.9.0" {
		t.Errorf("fixed versions = %+v, want file %s.0 (NUMERIC_VERSION), product 7.8.9.0 (the tag's numeric part)", parsed.Fixed, numeric)
	}
	strs, ok := parsed.Info["380A"]
	if !ok {
		t.Fatalf("no Spanish (Uruguay) string table: %s", js)
	}
	for k, want := range map[string]string{
		"ProductName": "Agente CFE", "FileVersion": numeric, "ProductVersion": ver, "CompanyName": "cfe-agent",
		"FileDescription": "Agente de comprobantes fiscales electrónicos (CFE)", "OriginalFilename": "cfe-agent.exe",
	} {
		if strs[k] != want {
			t.Errorf("%s = %q, want %q", k, strs[k], want)
		}
	}

	var manifest []byte
	rs.WalkType(winres.RT_MANIFEST, func(_ winres.Identifier, _ uint16, data []byte) bool {
		manifest = data
		return false
	})
	for _, s := range []string{`level="asInvoker"`, "permonitorv2", "Microsoft.Windows.Common-Controls", `version="6.0.0.0"`} {
		if !bytes.Contains(manifest, []byte(s)) {
			t.Errorf("the manifest lacks %s:\n%s", s, manifest)
		}
	}

	pf, err := pe.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	oh, ok := pf.OptionalHeader.(*pe.OptionalHeader64)
	if !ok || oh.Subsystem != pe.IMAGE_SUBSYSTEM_WINDOWS_GUI {
		t.Errorf("PE optional header %T: want the GUI subsystem (no console window)", pf.OptionalHeader)
	}
}
