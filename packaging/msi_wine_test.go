package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/internal/testtool/wine"
)

// winePrefix is a Wine prefix of the test's own, with wineserver stopped
// at the end.
type winePrefix struct {
	t   *testing.T
	dir string
}

func newWinePrefix(t *testing.T) *winePrefix {
	t.Helper()
	testtool.Require(t, "wine")
	testtool.Require(t, "wineserver")
	w := &winePrefix{t: t, dir: filepath.Join(t.TempDir(), "pfx")}
	t.Cleanup(func() {
		// Exit status 1: no wineserver was running any more.
		if out, err := w.command("wineserver", "-k").CombinedOutput(); err != nil && len(bytes.TrimSpace(out)) > 0 {
			t.Logf("wineserver -k: %v %s", err, out)
		}
	})
	if out, err := w.command("wineboot", "-i").CombinedOutput(); err != nil {
		t.Fatalf("wineboot -i: %v\n%s", err, out)
	}
	return w
}

// wineCommandTime bounds each command in the prefix: Wine may hang where
// Windows would not.
const wineCommandTime = 3 * time.Minute

func (w *winePrefix) command(name string, args ...string) *exec.Cmd {
	// Not t.Context: the clean-up runs wineserver -k after it has ended.
	ctx, cancel := context.WithTimeout(context.Background(), wineCommandTime)
	w.t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, name, args...)
	// No Mono or Gecko: an MSI install needs neither, and asking for them
	// costs minutes.
	cmd.Env = append(os.Environ(), "WINEPREFIX="+w.dir, "WINEDEBUG=-all", "WINEDLLOVERRIDES=mscoree,mshtml=")
	return cmd
}

// msiexec runs msiexec quietly and returns its exit code.
func (w *winePrefix) msiexec(args ...string) int {
	w.t.Helper()
	cmd := w.command("wine", append([]string{"msiexec"}, append(args, "/qn")...)...)
	// The output goes to a file, not a pipe: the agent the installer
	// starts (asyncNoWait) inherits msiexec's handles and would hold a pipe
	// open, and the wait for msiexec with it, for as long as it runs.
	log, err := os.CreateTemp(w.t.TempDir(), "msiexec-*.log")
	if err != nil {
		w.t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	err = cmd.Run()
	log.Close()
	out, _ := os.ReadFile(log.Name())
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit) && exit.ExitCode() >= 0:
		return exit.ExitCode()
	case errors.As(err, &exit):
		w.t.Fatalf("msiexec %s did not finish within %s (%v)\n%s", strings.Join(args, " "), wineCommandTime, err, out)
	}
	w.t.Fatalf("msiexec %s: %v\n%s", strings.Join(args, " "), err, out)
	return -1
}

// regValue is reg query's data of value name under key, "" when absent.
func (w *winePrefix) regValue(key, name string) string {
	w.t.Helper()
	out, _ := w.command("wine", "reg", "query", key, "/v", name).Output()
	for line := range strings.Lines(strings.ReplaceAll(string(out), "\r", "")) {
		f := strings.Fields(line)
		if len(f) >= 3 && f[0] == name {
			return strings.TrimSpace(strings.SplitN(line, f[1], 2)[1])
		}
	}
	return ""
}

// waitAgentStarted waits (a minute at most) until the agent the installer
// started has written its log in logDir (its data folder's logs), then
// stops it and removes the log: the next install's start is seen afresh.
func (w *winePrefix) waitAgentStarted(logDir, after string) {
	w.t.Helper()
	if !testtool.WaitUntil(w.t, time.Minute, func() bool {
		logs, _ := filepath.Glob(filepath.Join(logDir, "*"))
		for _, l := range logs {
			if b, _ := os.ReadFile(l); len(b) > 0 {
				return true
			}
		}
		return false
	}) {
		w.t.Fatalf("after %s, the agent wrote no log in %s within a minute: the installer did not start it", after, logDir)
	}
	// /f: a prefix without a display has no window to send WM_CLOSE to.
	_ = w.command("wine", "taskkill", "/f", "/im", "cfe-agent.exe").Run()
	if !testtool.WaitUntil(w.t, time.Minute, func() bool { return os.RemoveAll(logDir) == nil }) {
		w.t.Fatalf("the agent's log folder %s stayed in use after taskkill", logDir)
	}
}

func (w *winePrefix) drive(path ...string) string {
	return filepath.Join(append([]string{w.dir, "drive_c"}, path...)...)
}

// TestMSI_wine installs the MSI with Wine's msiexec, upgrades it with a
// newer build of the same installer, and uninstalls it: the files, the Run
// value and the Start-menu entry come and go; the user's data stays. The
// install and the upgrade start the agent for the installing user, as the
// Run value would at the next login (cfe-agent.exe --autostart): its log
// appears in the user's data folder.
func TestMSI_wine(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("installs the MSI under Wine; -short skips it")
	}
	testtool.Require(t, "wixl")
	testtool.Require(t, "msiextract")
	// The prefix first: wineboot (mostly disk) runs while another test
	// builds the installers (mostly CPU).
	w := newWinePrefix(t)
	wine.RunsGo(t, w.dir) // the agent the installer starts is a Go program
	dir := distDir(t)
	msi := one(t, dir, "*.msi")

	users, _ := filepath.Glob(w.drive("users", "*", "AppData", "Roaming"))
	if len(users) != 1 {
		t.Fatalf("want one user's AppData in the prefix, found %q", users)
	}
	data := filepath.Join(users[0], "cfe-agent")
	if err := os.MkdirAll(data, 0o700); err != nil {
		t.Fatal(err)
	}
	config := []byte("active: sandbox\n")
	if err := os.WriteFile(filepath.Join(data, "config.yaml"), config, 0o600); err != nil {
		t.Fatal(err)
	}

	const run = `HKLM\Software\Microsoft\Windows\CurrentVersion\Run`
	installed := w.drive("Program Files", "cfe-agent")
	shortcut := func() []string {
		m, _ := filepath.Glob(w.drive("*", "*", "*", "*", "Microsoft", "Windows", "Start Menu", "Programs", "Agente CFE.lnk"))
		n, _ := filepath.Glob(w.drive("*", "Microsoft", "Windows", "Start Menu", "Programs", "Agente CFE.lnk"))
		return append(m, n...)
	}

	if code := w.msiexec("/i", msi); code != 0 {
		t.Fatalf("msiexec /i: exit %d", code)
	}
	for _, f := range []string{"cfe-agent.exe", `SumatraPDF/SumatraPDF.exe`, "SumatraPDF/COPYING.txt", "SumatraPDF/SOURCE.txt"} {
		if _, err := os.Stat(filepath.Join(installed, f)); err != nil {
			t.Errorf("after install: %v", err)
		}
	}
	if got, want := w.regValue(run, "cfe-agent"), `"C:\Program Files\cfe-agent\cfe-agent.exe" --autostart`; got != want {
		t.Errorf("after install, Run\\cfe-agent = %q, want %q", got, want)
	}
	if got := w.regValue(`HKLM\Software\cfe-agent`, "InstallDir"); got != `C:\Program Files\cfe-agent\` {
		t.Errorf("after install, InstallDir = %q", got)
	}
	if len(shortcut()) != 1 {
		t.Errorf("after install, Start-menu entries %q; want one «Agente CFE»", shortcut())
	}
	w.waitAgentStarted(filepath.Join(data, "logs"), "the install")

	// A service "cfe-agent service install" made (registered here with sc:
	// this prefix cannot run the Go program). The MSI's ServiceControl
	// stops it around the upgrade and the uninstall but never deletes it:
	// the major upgrade uninstalls the old product, and the technician's
	// service must outlive that.
	serviceState := func() string {
		out, err := w.command("wine", "sc", "query", "cfe-agent").CombinedOutput()
		if err != nil || !bytes.Contains(out, []byte("SERVICE_NAME: cfe-agent")) {
			return ""
		}
		return string(out)
	}
	create := w.command("wine", "sc", "create", "cfe-agent", "binPath=",
		`"C:\Program Files\cfe-agent\cfe-agent.exe" --data-dir C:\cfe-agent-datos serve`)
	if out, err := create.CombinedOutput(); err != nil || serviceState() == "" {
		t.Fatalf("sc create cfe-agent: %v\n%s", err, out)
	}

	// A newer build of the same installer replaces it (MajorUpgrade); the
	// older one is then refused.
	newer := filepath.Join(t.TempDir(), "newer.msi")
	major, _, _ := strings.Cut(versions(t)["MSI_VERSION"], ".")
	n, err := strconv.Atoi(major)
	if err != nil || n >= 254 {
		t.Fatalf("MSI_VERSION %q: want a major version under 254", versions(t)["MSI_VERSION"])
	}
	newerVersion := strconv.Itoa(n+1) + ".0.0"
	stage := t.TempDir()
	if out, err := exec.Command("msiextract", "-C", stage, msi).CombinedOutput(); err != nil {
		t.Fatalf("msiextract: %v\n%s", err, out)
	}
	if err := writeIcons(filepath.Join(stage, "cfe-agent")); err != nil {
		t.Fatal(err)
	}
	wxs, err := filepath.Abs(filepath.Join("windows", "cfe-agent.wxs"))
	if err != nil {
		t.Fatal(err)
	}
	build := exec.Command("wixl", "-a", "x64", "-D", "Version="+newerVersion, "-o", newer, wxs)
	build.Dir = filepath.Join(stage, "cfe-agent")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("wixl: %v\n%s", err, out)
	}
	if code := w.msiexec("/i", newer); code != 0 {
		t.Fatalf("msiexec /i of the newer MSI: exit %d", code)
	}
	w.waitAgentStarted(filepath.Join(data, "logs"), "the upgrade")
	out, _ := w.command("wine", "reg", "query", `HKLM\Software\Microsoft\Windows\CurrentVersion\Uninstall`, "/s").Output()
	if n := bytes.Count(out, []byte("Agente CFE")); n != 1 || !bytes.Contains(out, []byte(newerVersion)) {
		t.Errorf("after the upgrade, %d «Agente CFE» in Add/Remove Programs, want one at %s:\n%s", n, newerVersion, out)
	}
	if code := w.msiexec("/i", msi); code == 0 {
		t.Error("the older MSI installed over the newer one; want it refused")
	}
	if st := serviceState(); !strings.Contains(st, "STOPPED") {
		t.Errorf("after the upgrade, the cfe-agent service: %q; want it still registered, stopped", st)
	}

	if code := w.msiexec("/x", newer); code != 0 {
		t.Fatalf("msiexec /x: exit %d", code)
	}
	if _, err := os.Stat(installed); !os.IsNotExist(err) {
		t.Errorf("after uninstall, %s: %v; want it gone", installed, err)
	}
	if got := w.regValue(run, "cfe-agent"); got != "" {
		t.Errorf("after uninstall, Run\\cfe-agent = %q; want it gone", got)
	}
	if s := shortcut(); len(s) != 0 {
		t.Errorf("after uninstall, Start-menu entries %q; want none", s)
	}
	if serviceState() == "" {
		t.Error("uninstalling deleted the cfe-agent service: only «cfe-agent service uninstall» removes it")
	}
	if got, err := os.ReadFile(filepath.Join(data, "config.yaml")); err != nil || !bytes.Equal(got, config) {
		t.Errorf("after uninstall, the user's data %s: %q, %v; want it kept", data, got, err)
	}
}
