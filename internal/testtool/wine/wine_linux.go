package wine

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/internal/testtool"
)

//go:embed shim/prng.c
var shimSource []byte

// layout changes when the way a prefix is prepared changes, so that caches
// made the old way are not reused.
const layout = "2" // 2: Wine's null graphics driver (windows without a display)

// readyFile marks a prefix whose preparation finished.
const readyFile = ".cfe-ready"

// EnvCacheDir names the folder that holds the cached prefixes; the user's
// cache directory (…/cfe-agent/wine) when it is not set.
const EnvCacheDir = "CFE_WINE_CACHE"

// Prefix is a Wine prefix that one test holds.
type Prefix struct {
	t          testing.TB
	Dir        string // the WINEPREFIX
	wine       string
	wineserver string
}

// Available skips the test, as New would, when Wine tests do not run here:
// with -short, or without wine, wineserver or the MinGW compiler (a failure
// under CFE_STRICT_TOOLS=1). A test calls it before the builds it does ahead
// of New.
func Available(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("the Wine tests take a minute: not with -short (make test and make test-windows run them)")
	}
	for _, tool := range []string{"wine", "wineserver", "x86_64-w64-mingw32-gcc"} {
		testtool.Require(t, tool)
	}
}

// New returns the cached Wine prefix, made (with the ProcessPrng shim) when it
// does not exist, and held by t until t ends, when its wineserver is killed.
// It waits while another test, in this test binary or another, holds it.
func New(t testing.TB) *Prefix {
	t.Helper()
	Available(t)
	p := &Prefix{t: t, wine: testtool.Require(t, "wine"), wineserver: testtool.Require(t, "wineserver")}
	gcc := testtool.Require(t, "x86_64-w64-mingw32-gcc")
	version, err := exec.Command(p.wine, "--version").Output()
	if err != nil {
		t.Fatalf("wine --version: %v", err)
	}
	base := os.Getenv(EnvCacheDir)
	if base == "" {
		c, err := os.UserCacheDir()
		if err != nil {
			t.Fatalf("no cache directory for the Wine prefix (set %s): %v", EnvCacheDir, err)
		}
		base = filepath.Join(c, "cfe-agent", "wine")
	}
	if err := os.MkdirAll(base, 0o700); err != nil {
		t.Fatal(err)
	}
	p.Dir = filepath.Join(base, prefixKey(string(version)))
	p.lock()
	// A test binary that died without its clean-up may have left a
	// wineserver behind; its processes are nobody's now.
	p.killServer()
	t.Cleanup(p.killServer)
	if _, err := os.Stat(filepath.Join(p.Dir, readyFile)); err != nil {
		p.create(gcc)
	}
	if target, err := os.Readlink(filepath.Join(p.Dir, "dosdevices", "z:")); err != nil || target != "/" {
		t.Fatalf("the Wine prefix %s has no Z: drive for / (%q, %v): WindowsPath cannot map paths", p.Dir, target, err)
	}
	return p
}

// prefixKey names the prefix of a Wine version: the version, then a hash of
// what else goes into the prefix.
func prefixKey(version string) string {
	h := sha256.New()
	h.Write([]byte(layout))
	h.Write(shimSource)
	name := regexp.MustCompile(`[^A-Za-z0-9.]+`).ReplaceAllString(strings.TrimSpace(version), "_")
	return fmt.Sprintf("%s-%s", strings.Trim(name, "_"), hex.EncodeToString(h.Sum(nil))[:12])
}

// lock takes the prefix's lock file, waiting while another test holds it,
// and releases it when the test ends (after the wineserver is killed: the
// clean-ups run last-registered first).
func (p *Prefix) lock() {
	f, err := os.OpenFile(p.Dir+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		p.t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		p.t.Fatalf("locking the Wine prefix: %v", err)
	}
	p.t.Cleanup(func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	})
}

// create makes the prefix from nothing: wineboot, then the shim.
func (p *Prefix) create(gcc string) {
	t := p.t
	start := time.Now()
	if err := os.RemoveAll(p.Dir); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	boot := exec.CommandContext(ctx, p.wine, "wineboot", "-i")
	boot.Env = p.Env()
	if out, err := boot.CombinedOutput(); err != nil {
		t.Fatalf("wineboot -i in %s: %v\n%s", p.Dir, err, out)
	}
	// Wine's null graphics driver: without a display (no X server in CI)
	// Wine refuses to create any window unless told to use it, and the
	// agent's hidden stop window (internal/winstop) is
	// what taskkill's WM_CLOSE reaches.
	reg := exec.CommandContext(ctx, p.wine, "reg", "add", `HKCU\Software\Wine\Drivers`, "/v", "Graphics", "/d", "null", "/f")
	reg.Env = p.Env()
	if out, err := reg.CombinedOutput(); err != nil {
		t.Fatalf("setting Wine's null graphics driver: %v\n%s", err, out)
	}
	// wineboot returns before the prefix is written: the wineserver saves
	// the registry when it exits.
	wait := exec.CommandContext(ctx, p.wineserver, "-w")
	wait.Env = p.Env()
	if out, err := wait.CombinedOutput(); err != nil {
		t.Fatalf("wineserver -w: %v\n%s", err, out)
	}
	sys32 := filepath.Join(p.Dir, "drive_c", "windows", "system32")
	if _, err := os.Stat(filepath.Join(sys32, "kernel32.dll")); err != nil {
		t.Fatalf("wineboot made no 64-bit prefix in %s (is wine64 installed?): %v", p.Dir, err)
	}
	buildShim(t, gcc, sys32)
	if err := os.WriteFile(filepath.Join(p.Dir, readyFile), []byte(time.Now().UTC().Format(time.RFC3339)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Logf("made the Wine prefix %s in %s", p.Dir, time.Since(start).Round(100*time.Millisecond))
}

// buildShim builds the ProcessPrng shim into the prefix's system32 folder.
func buildShim(t testing.TB, gcc, sys32 string) {
	t.Helper()
	src := filepath.Join(t.TempDir(), "prng.c")
	if err := os.WriteFile(src, shimSource, 0o600); err != nil {
		t.Fatal(err)
	}
	dll := filepath.Join(sys32, "bcryptprimitives.dll")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, gcc, "-shared", "-O2", "-o", dll, src, "-ladvapi32").CombinedOutput(); err != nil {
		t.Fatalf("building the ProcessPrng shim: %v\n%s", err, out)
	}
}

// RunsGo makes a prefix of the caller's own (one that another test made
// with wineboot, such as an installer's test prefix) able to run Go
// programs: it builds the ProcessPrng shim into its system32 folder. It
// needs x86_64-w64-mingw32-gcc (skipped without it, or failed under
// CFE_STRICT_TOOLS=1).
func RunsGo(t testing.TB, prefixDir string) {
	t.Helper()
	buildShim(t, testtool.Require(t, "x86_64-w64-mingw32-gcc"), filepath.Join(prefixDir, "drive_c", "windows", "system32"))
}

// killServer kills the prefix's wineserver and every Windows process in it,
// and waits until it has gone.
func (p *Prefix) killServer() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	kill := exec.CommandContext(ctx, p.wineserver, "-k")
	kill.Env = p.Env()
	_ = kill.Run() // fails when no wineserver runs: nothing to kill
	wait := exec.CommandContext(ctx, p.wineserver, "-w")
	wait.Env = p.Env()
	_ = wait.Run()
}

// Kill stops every Windows process of the prefix at once, as a power cut
// would: wineserver -k. The test's clean-up does it too.
func (p *Prefix) Kill() { p.killServer() }

// Env is the environment of a Windows program in the prefix: PATH, HOME, USER
// and LANG of the test's own, WINEPREFIX, no Wine debug output, no Mono or
// Gecko installers, no display, then extra ("NAME=value").
func (p *Prefix) Env(extra ...string) []string {
	env := []string{
		"WINEPREFIX=" + p.Dir,
		"WINEDEBUG=-all",
		"WINEDLLOVERRIDES=mscoree,mshtml=;winemenubuilder.exe=d",
	}
	for _, name := range []string{"PATH", "HOME", "USER", "LOGNAME", "LANG"} {
		if v, ok := os.LookupEnv(name); ok {
			env = append(env, name+"="+v)
		}
	}
	return append(env, extra...)
}

// Command returns the command that runs exe (a Linux path, or a program of
// the prefix such as "taskkill") under Wine with args and p.Env(). Add to its
// Env with p.Env(extra...).
func (p *Prefix) Command(ctx context.Context, exe string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, p.wine, append([]string{exe}, args...)...)
	cmd.Env = p.Env()
	return cmd
}

// WindowsPath returns how a Windows program in the prefix names the Linux
// path: Wine's Z: drive is the Linux root.
func (p *Prefix) WindowsPath(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		p.t.Fatal(err)
	}
	return `Z:` + strings.ReplaceAll(abs, "/", `\`)
}

// AppData returns the Linux path of the prefix user's %APPDATA%
// (C:\users\NAME\AppData\Roaming), where NAME is the Linux user's.
func (p *Prefix) AppData() string {
	users := filepath.Join(p.Dir, "drive_c", "users")
	entries, err := os.ReadDir(users)
	if err != nil {
		p.t.Fatal(err)
	}
	var found []string
	for _, e := range entries {
		dir := filepath.Join(users, e.Name(), "AppData", "Roaming")
		if e.Name() == "Public" {
			continue
		}
		if _, err := os.Stat(dir); err == nil {
			found = append(found, dir)
		}
	}
	if len(found) != 1 {
		p.t.Fatalf("the Wine prefix has %d user profiles with AppData\\Roaming, want 1: %v", len(found), found)
	}
	return found[0]
}

// LocalAppData returns the Linux path of the prefix user's %LOCALAPPDATA%
// (C:\users\NAME\AppData\Local), beside AppData's Roaming.
func (p *Prefix) LocalAppData() string {
	return filepath.Join(filepath.Dir(p.AppData()), "Local")
}

// goEnv is the environment of a cross-build for windows/amd64.
func goEnv() []string {
	return append(os.Environ(), "GOOS=windows", "GOARCH=amd64", "CGO_ENABLED=0")
}

// Build cross-builds the main package pkg (an import path or ./dir relative
// to the repository) for windows/amd64 with ldflags, into a file of the test's
// temporary folder, and returns its Linux path.
func Build(t testing.TB, pkg, ldflags string) string {
	t.Helper()
	exe := filepath.Join(t.TempDir(), filepath.Base(pkg)+".exe")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", ldflags, "-o", exe, pkg)
	cmd.Dir = testtool.RepoRoot(t)
	cmd.Env = goEnv()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("GOOS=windows go build %s: %v\n%s", pkg, err, out)
	}
	return exe
}

// BuildAgent builds cfe-agent.exe the way it ships: `make windows` (the
// GUI-subsystem link flags of the Makefile's WINDOWS_LDFLAGS, and the icon,
// version and manifest resources) with VERSION=version, into a file of the
// test's temporary folder, and returns its Linux path. The resources' .syso
// is written where the Makefile writes it (cmd/cfe-agent, ignored by git):
// two builds at once would write it together, so a test binary that needs
// the agent in several tests builds it once (BuildAgentIn).
func BuildAgent(t testing.TB, version string) string {
	t.Helper()
	testtool.Require(t, "make")
	exe, err := BuildAgentIn(t.TempDir(), testtool.RepoRoot(t), version)
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// BuildAgentIn is BuildAgent into the folder dir, for a build that outlives
// one test; root is the repository (testtool.RepoRoot).
func BuildAgentIn(dir, root, version string) (string, error) {
	exe := filepath.Join(dir, "cfe-agent.exe")
	cmd := exec.Command("make", "--no-print-directory", "windows", "WINDOWS_EXE="+exe, "VERSION="+version)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("make windows: %w\n%s", err, out)
	}
	return exe, nil
}

// fallbackTest is a test file added (through go's -overlay, never written
// into the package) to each test binary BuildTest makes. Go 1.26's
// os.RemoveAll deletes with NtSetInformationFile(FileDispositionInformationEx),
// which Wine 8.0 does not implement (STATUS_NOT_IMPLEMENTED, "Invalid
// function"), and Go falls back to the older FileDispositionInformation only
// for the errors a real Windows gives: every t.TempDir clean-up would fail.
// The file turns on Go's own test switch for that fallback (the path Go takes
// on Windows before 10 and on FAT32), which needs -checklinkname=0.
const fallbackTest = `package %s

import _ "unsafe" // go:linkname

//go:linkname wineDeleteatFallback internal/syscall/windows.TestDeleteatFallback
var wineDeleteatFallback bool

func init() { wineDeleteatFallback = true }
`

// TestBinary is a package's Windows test executable.
type TestBinary struct {
	Exe string // Linux path of the .test.exe
	Dir string // the package's folder: the working directory go test gives
}

// BuildTest builds the tests of pkg (an import path) for windows/amd64 with
// `go test -c` into the test's temporary folder, with the os.RemoveAll
// fallback that Wine needs (see fallbackTest).
func BuildTest(t testing.TB, pkg string) TestBinary {
	t.Helper()
	b, err := BuildTestIn(t.TempDir(), testtool.RepoRoot(t), pkg)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// BuildTestIn is BuildTest into the folder tmp, without a test: several
// builds may run at once (each in its own folder); root is the repository
// (testtool.RepoRoot).
func BuildTestIn(tmp, root, pkg string) (TestBinary, error) {
	list := exec.Command("go", "list", "-f", "{{.Dir}}\t{{.Name}}", pkg)
	list.Dir = root
	list.Env = goEnv()
	out, err := list.Output()
	if err != nil {
		return TestBinary{}, fmt.Errorf("go list %s: %w", pkg, err)
	}
	dir, name, ok := strings.Cut(strings.TrimSpace(string(out)), "\t")
	if !ok {
		return TestBinary{}, fmt.Errorf("go list %s: %q", pkg, out)
	}
	src := filepath.Join(tmp, "fallback.go")
	if err := os.WriteFile(src, fmt.Appendf(nil, fallbackTest, name+"_test"), 0o600); err != nil {
		return TestBinary{}, err
	}
	added := filepath.Join(dir, "zz_wine_fallback_test.go")
	if _, err := os.Stat(added); !errors.Is(err, fs.ErrNotExist) {
		return TestBinary{}, fmt.Errorf("%s exists: the overlay would replace it", added)
	}
	overlay := filepath.Join(tmp, "overlay.json")
	if err := os.WriteFile(overlay, fmt.Appendf(nil, `{"Replace":{%q:%q}}`, added, src), 0o600); err != nil {
		return TestBinary{}, err
	}
	exe := filepath.Join(tmp, name+".test.exe")
	cmd := exec.Command("go", "test", "-c", "-overlay", overlay, "-ldflags=-checklinkname=0", "-o", exe, pkg)
	cmd.Dir = root
	cmd.Env = goEnv()
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Run(); err != nil {
		return TestBinary{}, fmt.Errorf("GOOS=windows go test -c %s: %w\n%s", pkg, err, stderr.String())
	}
	return TestBinary{Exe: exe, Dir: dir}, nil
}
