package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/service"
)

// The artifacts' tests use the dist/ that `make dist` built when
// CFE_DIST_DIR names it (CI), else build one themselves, once per run.

var (
	built     string // the directory buildDist made, removed by TestMain
	buildOnce = sync.OnceValues(buildDist)
)

// The tests spend their time waiting: for the installers' build (all but
// TestWriteUnit), for Wine (TestMSI_wine), for lintian. go test runs as many
// parallel tests at once as there are CPUs, which on a small machine leaves
// TestMSI_wine waiting for a turn while two tests wait for the build; unless
// -test.parallel is given, TestMain lets them all run at once, so that
// TestMSI_wine makes its Wine prefix while the installers build.
func TestMain(m *testing.M) {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		if err := flag.Set("test.parallel", "8"); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	}
	code := m.Run()
	if built != "" {
		_ = os.RemoveAll(built)
	}
	os.Exit(code)
}

// buildDist runs scripts/dist.sh into a temporary directory.
func buildDist() (string, error) {
	dir, err := os.MkdirTemp("", "cfe-agent-dist-")
	if err != nil {
		return "", err
	}
	built = dir
	cmd := exec.Command("./scripts/dist.sh")
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), "DIST="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("scripts/dist.sh: %w\n%s", err, out)
	}
	return dir, nil
}

// distDir is the directory of the artifacts under test.
func distDir(t *testing.T) string {
	t.Helper()
	if d := os.Getenv("CFE_DIST_DIR"); d != "" {
		if !filepath.IsAbs(d) {
			d = filepath.Join("..", d) // relative to the repository, like make dist's dist/
		}
		abs, err := filepath.Abs(d)
		if err != nil {
			t.Fatal(err)
		}
		return abs
	}
	if testing.Short() {
		t.Skip("builds the installers (scripts/dist.sh); -short skips it; CFE_DIST_DIR=dist uses the output of make dist")
	}
	for _, tool := range []string{"git", "npm", "wixl"} {
		testtool.Require(t, tool)
	}
	dir, err := buildOnce()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// versions are scripts/version.sh's, the versions the artifacts must carry.
func versions(t *testing.T) map[string]string {
	t.Helper()
	cmd := exec.Command("./scripts/version.sh")
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("scripts/version.sh: %v", err)
	}
	v := make(map[string]string)
	for line := range strings.Lines(string(out)) {
		k, val, _ := strings.Cut(strings.TrimSpace(line), "=")
		v[k] = val
	}
	return v
}

// one is the only file of dir matching pattern.
func one(t *testing.T, dir, pattern string) string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil || len(m) != 1 {
		t.Fatalf("want one %s in %s, found %q (%v)", pattern, dir, m, err)
	}
	return m[0]
}

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestDist_SHA256SUMS: the three raw binaries of the agent and of the
// sandbox, the MSI and the .deb are there, and SHA256SUMS covers each one.
func TestDist_SHA256SUMS(t *testing.T) {
	t.Parallel()
	testtool.Require(t, "sha256sum")
	dir := distDir(t)
	v := versions(t)
	name := strings.ReplaceAll(v["VERSION"], "+", "_")
	want := []string{"cfe-agent_" + v["DEB_VERSION"] + "_amd64.deb", "cfe-agent_" + name + "_x64.msi"}
	for _, c := range []string{"cfe-agent", "cfe-sandbox"} {
		for _, p := range []string{"linux_amd64", "windows_amd64.exe", "darwin_arm64"} {
			want = append(want, c+"_"+name+"_"+p)
		}
	}
	sums, err := os.ReadFile(filepath.Join(dir, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for line := range strings.Lines(string(sums)) {
		if _, file, ok := strings.Cut(strings.TrimSpace(line), "  "); ok {
			listed = append(listed, file)
		}
	}
	slices.Sort(listed)
	slices.Sort(want)
	if !slices.Equal(listed, want) {
		t.Errorf("SHA256SUMS lists %q;\nwant %q", listed, want)
	}
	cmd := exec.Command("sha256sum", "--strict", "-c", "SHA256SUMS")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("sha256sum -c: %v\n%s", err, out)
	}
}

// msiTable reads one table of an MSI with msiinfo export: one map per row,
// keyed by column name.
func msiTable(t *testing.T, msi, table string) []map[string]string {
	t.Helper()
	out := run(t, "msiinfo", "export", msi, table)
	lines := strings.Split(strings.TrimRight(strings.ReplaceAll(out, "\r\n", "\n"), "\n"), "\n")
	if len(lines) < 3 {
		t.Fatalf("msiinfo export %s: %q", table, out)
	}
	cols := strings.Split(lines[0], "\t")
	var rows []map[string]string
	for _, l := range lines[3:] {
		cells := strings.Split(l, "\t")
		row := make(map[string]string, len(cols))
		for i, c := range cols {
			if i < len(cells) {
				row[c] = cells[i]
			}
		}
		rows = append(rows, row)
	}
	return rows
}

// longName is the long half of an MSI "short|long" file name.
func longName(s string) string {
	if _, long, ok := strings.Cut(s, "|"); ok {
		return long
	}
	return s
}

// find is the first row whose column col is val.
func find(rows []map[string]string, col, val string) (map[string]string, bool) {
	for _, r := range rows {
		if r[col] == val {
			return r, true
		}
	}
	return nil, false
}

// The MSI's fixed UpgradeCode (packaging/windows/cfe-agent.wxs): never change it.
const upgradeCode = "{4C03A57E-086B-4E32-8043-DE5412C51085}"

// TestMSI checks the Windows installer's tables with msiinfo, and its
// files with msiextract.
func TestMSI(t *testing.T) {
	t.Parallel()
	testtool.Require(t, "msiinfo")
	dir := distDir(t)
	v := versions(t)
	msi := one(t, dir, "*.msi")

	props := make(map[string]string)
	for _, r := range msiTable(t, msi, "Property") {
		props[r["Property"]] = r["Value"]
	}
	for k, want := range map[string]string{"ProductVersion": v["MSI_VERSION"], "UpgradeCode": upgradeCode,
		"ProductName": "Agente CFE", "ALLUSERS": "1", "ARPPRODUCTICON": "cfe_agent.ico"} {
		if props[k] != want {
			t.Errorf("Property %s = %q, want %q", k, props[k], want)
		}
	}
	for _, k := range []string{"Manufacturer", "ARPHELPLINK"} {
		if props[k] == "" {
			t.Errorf("Property %s is empty (Add/Remove Programs shows it)", k)
		}
	}

	// Where each directory is, as a path from TARGETDIR.
	dirs := msiTable(t, msi, "Directory")
	var path func(id string) string
	path = func(id string) string {
		r, ok := find(dirs, "Directory", id)
		if !ok || r["Directory_Parent"] == "" || r["Directory_Parent"] == id {
			return id
		}
		name := longName(r["DefaultDir"])
		if name == "." {
			return path(r["Directory_Parent"]) + `\` + id
		}
		return path(r["Directory_Parent"]) + `\` + name
	}
	for _, r := range dirs {
		p := path(r["Directory"])
		// The agent's data is in each user's profile: nothing of the MSI may
		// be there, or uninstalling could take it away.
		for _, forbidden := range []string{"AppDataFolder", "LocalAppDataFolder", "CommonAppDataFolder", "PersonalFolder", "ProfileFolder"} {
			if strings.Contains(p, forbidden) {
				t.Errorf("directory %s (%s) is in the user's data: the MSI must not own the data directory", r["Directory"], p)
			}
		}
	}

	components := msiTable(t, msi, "Component")
	files := msiTable(t, msi, "File")
	fileAt := func(name string) (dirPath, component string) {
		t.Helper()
		for _, f := range files {
			if longName(f["FileName"]) == name {
				c, _ := find(components, "Component", f["Component_"])
				return path(c["Directory_"]), f["Component_"]
			}
		}
		t.Errorf("the File table has no %s", name)
		return "", ""
	}
	const installDir = `TARGETDIR\ProgramFiles64Folder\cfe-agent`
	agentDir, agentComponent := fileAt("cfe-agent.exe")
	if agentDir != installDir {
		t.Errorf("cfe-agent.exe goes to %s, want %s", agentDir, installDir)
	}
	for _, name := range []string{"SumatraPDF.exe", "COPYING.txt", "SOURCE.txt"} {
		if d, _ := fileAt(name); d != installDir+`\SumatraPDF` {
			t.Errorf("%s goes to %s, want %s", name, d, installDir+`\SumatraPDF`)
		}
	}
	for _, c := range components {
		if c["Attributes"] != "" && !strings.Contains(" 256 260 ", " "+c["Attributes"]+" ") {
			t.Errorf("component %s has attributes %s; want 64-bit (256), registry key path allowed (260)", c["Component"], c["Attributes"])
		}
	}

	sc, ok := find(msiTable(t, msi, "Shortcut"), "Shortcut", "StartMenuShortcut")
	switch {
	case !ok:
		t.Error("the Shortcut table has no Start-menu entry")
	case longName(sc["Name"]) != "Agente CFE" || path(sc["Directory_"]) != `TARGETDIR\ProgramMenuFolder` ||
		sc["Target"] != "[INSTALLDIR]cfe-agent.exe" || sc["Icon_"] != "cfe_agent.ico":
		t.Errorf("Start-menu shortcut %v; want «Agente CFE» in ProgramMenuFolder to [INSTALLDIR]cfe-agent.exe with the icon", sc)
	}

	// The machine-wide Run value: in the agent's own component, so that
	// uninstalling removes it with the program.
	reg := msiTable(t, msi, "Registry")
	runValue, ok := find(reg, "Name", "cfe-agent")
	if !ok || runValue["Root"] != "2" || runValue["Key"] != `Software\Microsoft\Windows\CurrentVersion\Run` ||
		runValue["Value"] != `"[INSTALLDIR]cfe-agent.exe" --autostart` || runValue["Component_"] != agentComponent {
		t.Errorf("Run value %v; want HKLM (2) ...\\Run cfe-agent = \"[INSTALLDIR]cfe-agent.exe\" --autostart in component %s", runValue, agentComponent)
	}

	// The service "cfe-agent service install" made runs cfe-agent.exe: it is
	// stopped, waiting, at install (upgrade) and uninstall (Event 2|32), and
	// never deleted (no 8 or 128: a major upgrade uninstalls the old product).
	svc, ok := find(msiTable(t, msi, "ServiceControl"), "Name", "cfe-agent")
	if !ok || svc["Event"] != "34" || svc["Wait"] != "1" || svc["Component_"] != agentComponent {
		t.Errorf("ServiceControl %v; want cfe-agent, Event 34 (stop at install and uninstall), Wait 1, in component %s", svc, agentComponent)
	}
	if _, ok := find(msiTable(t, msi, "InstallExecuteSequence"), "Action", "StopServices"); !ok {
		t.Error("InstallExecuteSequence has no StopServices: the ServiceControl row would never run")
	}
	for _, r := range reg {
		if r["Root"] != "2" {
			t.Errorf("registry value %v is not under HKLM: a per-machine install writes nothing per user", r)
		}
	}
	for _, table := range []string{"RemoveFile", "CreateFolder"} {
		if rows := msiTable(t, msi, table); len(rows) > 0 {
			t.Errorf("%s has rows %v: the MSI neither creates nor removes folders of its own", table, rows)
		}
	}

	// MajorUpgrade: older versions of the same UpgradeCode are removed.
	var upgrades bool
	for _, r := range msiTable(t, msi, "Upgrade") {
		if r["UpgradeCode"] != upgradeCode {
			t.Errorf("Upgrade row %v has another UpgradeCode", r)
		}
		if r["VersionMax"] == v["MSI_VERSION"] && r["ActionProperty"] == "WIX_UPGRADE_DETECTED" {
			upgrades = true
		}
	}
	if _, ok := find(msiTable(t, msi, "InstallExecuteSequence"), "Action", "RemoveExistingProducts"); !upgrades || !ok {
		t.Errorf("no major upgrade: Upgrade row up to %s and RemoveExistingProducts wanted", v["MSI_VERSION"])
	}

	// The files themselves: the agent that make dist built, SumatraPDF and
	// its licence and source note.
	if _, err := exec.LookPath("msiextract"); err != nil {
		t.Log("msiextract is not installed: the MSI's files are not compared")
		return
	}
	out := t.TempDir()
	run(t, "msiextract", "-C", out, msi)
	root := filepath.Join(out, "cfe-agent") // msiextract drops ProgramFiles64Folder
	got, err := os.ReadFile(filepath.Join(root, "cfe-agent.exe"))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(one(t, dir, "cfe-agent_*_windows_amd64.exe"))
	if err != nil || !bytes.Equal(got, raw) {
		t.Errorf("the MSI's cfe-agent.exe is not the raw Windows binary of dist/ (%v)", err)
	}
	sumatra, err := os.ReadFile(filepath.Join(root, "SumatraPDF", "SumatraPDF.exe"))
	if err != nil || len(sumatra) < 1<<20 || !bytes.HasPrefix(sumatra, []byte("MZ")) {
		t.Errorf("SumatraPDF.exe: %d bytes, %v; want a Windows program", len(sumatra), err)
	}
	for name, want := range map[string]string{"COPYING.txt": "GNU GENERAL PUBLIC LICENSE",
		"SOURCE.txt": "https://github.com/sumatrapdfreader/sumatrapdf (tag 3.4.6)"} {
		b, err := os.ReadFile(filepath.Join(root, "SumatraPDF", name))
		if err != nil || !bytes.Contains(b, []byte(want)) {
			t.Errorf("SumatraPDF\\%s does not say %q (%v)", name, want, err)
		}
	}
}

// TestDeb lints the .deb, reads its control data and files, installs it
// into a throwaway root and runs its systemd unit's command there until
// /health answers.
func TestDeb(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"lintian", "dpkg-deb", "dpkg"} {
		testtool.Require(t, tool)
	}
	dir := distDir(t)
	v := versions(t)
	deb := one(t, dir, "*.deb")

	t.Run("lintian", func(t *testing.T) {
		t.Parallel()
		// Errors fail lintian itself; warnings are read here: each is a
		// defect of the package, except an override of spelling-error-in-binary
		// that meets no hint (mismatched-override, which --suppress-tags does
		// not hide): those words come and go with the binary's layout
		// (packaging/linux/lintian-overrides has none, for that reason).
		out, err := exec.Command("lintian", "--fail-on", "error", "--tag-display-limit", "0", "-I", deb).CombinedOutput()
		if err != nil {
			t.Fatalf("lintian: %v\n%s", err, out)
		}
		var warnings []string
		for line := range strings.Lines(string(out)) {
			if strings.HasPrefix(line, "W: ") && !strings.Contains(line, " mismatched-override spelling-error-in-binary ") {
				warnings = append(warnings, strings.TrimSpace(line))
			}
		}
		if len(warnings) > 0 {
			t.Errorf("lintian warns:\n%s\n\nall it said:\n%s", strings.Join(warnings, "\n"), out)
		} else if len(bytes.TrimSpace(out)) > 0 {
			t.Logf("lintian (information only):\n%s", out)
		}
	})

	t.Run("control", func(t *testing.T) {
		t.Parallel()
		for field, want := range map[string]string{"Package": "cfe-agent", "Version": v["DEB_VERSION"], "Architecture": "amd64"} {
			if got := strings.TrimSpace(run(t, "dpkg-deb", "-f", deb, field)); got != want {
				t.Errorf("%s: %q, want %q", field, got, want)
			}
		}
		rec := strings.TrimSpace(run(t, "dpkg-deb", "-f", deb, "Recommends"))
		for _, want := range []string{"libxml2-utils", "xmlsec1", "poppler-utils", "cups-client", "zbar-tools"} {
			if !slices.Contains(strings.Split(rec, ", "), want) {
				t.Errorf("Recommends %q lacks %s", rec, want)
			}
		}
		list := run(t, "dpkg-deb", "-c", deb)
		for _, want := range []string{"./usr/bin/cfe-agent", "./usr/share/applications/cfe-agent.desktop",
			"./etc/xdg/autostart/cfe-agent.desktop", "./usr/share/icons/hicolor/32x32/apps/cfe-agent.png",
			"./usr/lib/systemd/system/cfe-agent.service", "./usr/share/doc/cfe-agent/copyright",
			"./usr/share/doc/cfe-agent/changelog.gz", "./usr/share/man/man1/cfe-agent.1.gz"} {
			if !strings.Contains(list, " "+want+"\n") {
				t.Errorf("the package has no %s:\n%s", want, list)
			}
		}
	})

	// dpkg unpacks into a root of its own, with its own database; the
	// maintainer scripts (postinst: the system user) do not run.
	root := t.TempDir()
	for _, d := range []string{"var/lib/dpkg/info", "var/lib/dpkg/updates"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "var/lib/dpkg/status"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, "dpkg", "--root="+root, "--force-not-root", "--unpack", deb)
	if got := run(t, "dpkg-query", "--admindir="+filepath.Join(root, "var/lib/dpkg"), "-W", "-f=${Version}", "cfe-agent"); got != v["DEB_VERSION"] {
		t.Errorf("dpkg-query: installed version %q, want %q", got, v["DEB_VERSION"])
	}
	// The autostart entry is a conffile: unpacked as .dpkg-new until
	// configured. It passes --autostart (a login where the service already
	// runs on the same data opens nothing); the menu entry does not.
	for f, exec := range map[string]string{"usr/share/applications/cfe-agent.desktop": "cfe-agent",
		"etc/xdg/autostart/cfe-agent.desktop.dpkg-new": "cfe-agent --autostart"} {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil || !bytes.Contains(b, []byte("\nName=Agente CFE\n")) || !bytes.Contains(b, []byte("\nExec="+exec+"\n")) {
			t.Errorf("%s: want Name=Agente CFE and Exec=%s (%v):\n%s", f, exec, err, b)
		}
	}

	// The installed program carries the release's version (-X main.version).
	if out := run(t, filepath.Join(root, "usr/bin/cfe-agent"), "--version"); !strings.Contains(out, v["VERSION"]) {
		t.Errorf("cfe-agent --version says %q; want %s in it", out, v["VERSION"])
	}

	unitFile := filepath.Join(root, "usr/lib/systemd/system/cfe-agent.service")
	unit := readUnit(t, unitFile)
	// One source for both units: the package's is service.SystemdUnit's,
	// as "cfe-agent service install" writes them.
	if got, err := os.ReadFile(unitFile); err != nil {
		t.Error(err)
	} else if want, err := service.SystemdUnit(packagedService); err != nil || !bytes.Equal(got, want) {
		t.Errorf("the packaged unit is not service.SystemdUnit's (%v):\n%s\nwant\n%s", err, got, want)
	}
	for key, want := range map[string]string{"User": "cfe-agent", "StateDirectory": "cfe-agent cfe-agent-witness", "Restart": "on-failure",
		"Environment": "TZ=America/Montevideo", "WantedBy": "multi-user.target"} {
		if unit[key] != want {
			t.Errorf("unit %s=%q, want %q", key, unit[key], want)
		}
	}

	t.Run("systemd-analyze verify", func(t *testing.T) {
		t.Parallel()
		analyze := testtool.Require(t, "systemd-analyze")
		out, _ := exec.Command(analyze, "verify", "--man=no", unitFile).CombinedOutput()
		// The unit names /usr/bin/cfe-agent, which is in the throwaway root,
		// not on this machine: that is the one complaint allowed.
		for line := range strings.Lines(string(out)) {
			if !strings.Contains(line, "Command /usr/bin/cfe-agent is not executable") && strings.TrimSpace(line) != "" {
				t.Errorf("systemd-analyze verify: %s", line)
			}
		}
	})

	t.Run("ExecStart serves /health", func(t *testing.T) {
		t.Parallel()
		args := strings.Fields(unit["ExecStart"])
		want := []string{"/usr/bin/cfe-agent", "--data-dir", "/var/lib/cfe-agent", "serve"}
		if !slices.Equal(args, want) {
			t.Fatalf("ExecStart %q, want %q", args, want)
		}
		// The same command, with the program and the state directories
		// inside the throwaway root, on a free loopback port, with the
		// environment systemd gives it: the unit's, and the cfe-agent user's
		// HOME, which is its data directory (postinst's adduser --home).
		args[0] = filepath.Join(root, args[0])
		args[2] = filepath.Join(root, args[2])
		for _, d := range strings.Fields(unit["StateDirectory"]) {
			if err := os.MkdirAll(filepath.Join(root, "var/lib", d), 0o700); err != nil {
				t.Fatal(err)
			}
		}
		addr := freeAddr(t)
		cmd := exec.Command(args[0], append(args[1:], "--listen", addr)...)
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "CFE_AGENT_") && !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, "XDG_STATE_HOME=") {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		cmd.Env = append(cmd.Env, unit["Environment"], "HOME="+args[2])
		var stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stderr, &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var waitErr error
		done := make(chan struct{})
		go func() { waitErr = cmd.Wait(); close(done) }()
		defer func() {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-done:
				if waitErr != nil {
					t.Errorf("the agent did not stop cleanly on SIGTERM: %v\n%s", waitErr, stderr.String())
				}
			case <-time.After(20 * time.Second):
				_ = cmd.Process.Kill()
				t.Errorf("the agent did not stop on SIGTERM:\n%s", stderr.String())
			}
		}()
		health := waitHealth(t, "http://"+addr+"/health", done)
		if ok, _ := health["ok"].(bool); !ok || health["status"] != "ok" {
			t.Errorf("/health = %v; want ok", health)
		}
		if _, err := os.Stat(filepath.Join(args[2], "config.yaml")); err != nil {
			t.Errorf("the agent keeps no config.yaml in its --data-dir: %v", err)
		}
		// The numbering witness, outside the data directory: in the unit's
		// second state directory.
		witness := filepath.Join(root, "var/lib/cfe-agent-witness", "sandbox", "219999830019", "sandbox.json")
		if _, err := os.Stat(witness); err != nil {
			t.Errorf("the agent wrote no numbering witness beside its data directory: %v", err)
		}
	})
}

// readUnit reads a systemd unit's Key=Value lines (the last of a key wins).
func readUnit(t *testing.T, file string) map[string]string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	unit := make(map[string]string)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "[") {
			continue
		}
		if k, val, ok := strings.Cut(line, "="); ok {
			unit[k] = val
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return unit
}

// freeAddr is a loopback address whose port was free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

// waitHealth polls url until it answers 200 with JSON, or the agent exits.
func waitHealth(t *testing.T, url string, exited <-chan struct{}) map[string]any {
	t.Helper()
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.After(60 * time.Second)
	var last string
	for {
		resp, err := client.Get(url)
		if err == nil {
			var body map[string]any
			derr := json.NewDecoder(resp.Body).Decode(&body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && derr == nil {
				return body
			}
			last = fmt.Sprintf("HTTP %d, %v", resp.StatusCode, body)
		} else {
			last = err.Error()
		}
		select {
		case <-exited:
			t.Fatalf("the agent exited before /health answered; last: %s", last)
		case <-deadline:
			t.Fatalf("/health did not answer 200 within 60 s; last: %s", last)
		case <-time.After(200 * time.Millisecond):
		}
	}
}
