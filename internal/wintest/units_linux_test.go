package wintest

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/internal/testtool/wine"
)

// EnvFull makes TestWine_WindowsUnitTests run the slow tests too (make
// test-windows sets it).
const EnvFull = "CFE_WINE_FULL"

// windowsUnit is one package whose tests run as a Windows executable.
type windowsUnit struct {
	pkg string // import path
	// skip names top-level tests that cannot run under Wine, with the reason.
	skip map[string]string
	// slow names top-level tests left to make test-windows (CFE_WINE_FULL=1).
	slow map[string]string
}

// windowsUnits lists the packages with Windows code (files *_windows.go or
// `go:build windows`) and the tests Wine cannot run. Add a package here when it
// gets Windows code.
var windowsUnits = []windowsUnit{
	{pkg: "github.com/cfe-agent/cfe-agent/autostart"},
	// Its TestMain builds no agent binary under Wine (no go there): the tests
	// that run the binary skip themselves.
	{pkg: "github.com/cfe-agent/cfe-agent/cmd/cfe-agent", skip: map[string]string{
		"TestCLI_Version": "it builds the agent with its own link flags (go build), and Wine has no go",
	}},
	{pkg: "github.com/cfe-agent/cfe-agent/durable", skip: map[string]string{
		"TestWriteFile":            "it asserts Unix file modes (0600, 0700), which Windows has not",
		"TestWriteFile_NewFolders": "it asserts Unix folder modes (0700), which Windows has not",
	}},
	{pkg: "github.com/cfe-agent/cfe-agent/internal/instance"},
	{pkg: "github.com/cfe-agent/cfe-agent/internal/console"},
	{pkg: "github.com/cfe-agent/cfe-agent/internal/winstop"},
	{pkg: "github.com/cfe-agent/cfe-agent/internal/machinezone", skip: map[string]string{
		"TestRead_TZ": "one case names the zone by a Unix path (/usr/share/zoneinfo/…), which Windows has not",
	}},
	// No Windows code of its own since the zone probe moved out
	// (internal/machinezone), but its tests run the issue path over the store
	// and the filesystem as Windows has them.
	{pkg: "github.com/cfe-agent/cfe-agent/issuer", skip: map[string]string{
		"TestIssuer_CrashSafety": "it tells its killed child by a Unix wait status (WaitStatus.Signaled), which " +
			"Windows has not: TerminateProcess leaves exit status 1, so it reports \"ended on its own\" " +
			"(store's kill-at-random test covers killed processes under Wine)",
	}},
	{pkg: "github.com/cfe-agent/cfe-agent/logs"},
	{pkg: "github.com/cfe-agent/cfe-agent/printer"},
	{pkg: "github.com/cfe-agent/cfe-agent/profiles"},
	{pkg: "github.com/cfe-agent/cfe-agent/service"},
	{pkg: "github.com/cfe-agent/cfe-agent/store", skip: map[string]string{
		"TestDB_CommitOnDamagedFile": "the damaged store's file is still open or mapped when the test ends, and " +
			"Windows refuses to delete it (\"Access denied\" in t.TempDir's clean-up; to be checked on real Windows)",
	}, slow: map[string]string{
		"TestDB_Backup_Killed":            "12 s under Wine",
		"TestCrash_KilledAtRandomMoments": "9 s under Wine",
	}},
	{pkg: "github.com/cfe-agent/cfe-agent/tray"},
}

// builtUnit is a package's Windows test executable, or why it was not built.
type builtUnit struct {
	bin wine.TestBinary
	err error
}

// buildUnits builds the Windows tests of every package of windowsUnits
// (wine.BuildTestIn), as many at a time as there are CPUs, into folders of
// the test's.
func buildUnits(t *testing.T) map[string]builtUnit {
	t.Helper()
	root := testtool.RepoRoot(t)
	dirs := make([]string, len(windowsUnits))
	for i := range windowsUnits {
		dirs[i] = t.TempDir()
	}
	var (
		mu    sync.Mutex
		wg    sync.WaitGroup
		built = map[string]builtUnit{}
		slots = make(chan struct{}, runtime.GOMAXPROCS(0))
	)
	for i, u := range windowsUnits {
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			bin, err := wine.BuildTestIn(dirs[i], root, u.pkg)
			mu.Lock()
			built[u.pkg] = builtUnit{bin, err}
			mu.Unlock()
		})
	}
	wg.Wait()
	return built
}

// resultRE matches go test's verdict lines of -test.v, at any depth.
var resultRE = regexp.MustCompile(`^\s*--- (PASS|FAIL|SKIP): (\S+) \(`)

// TestWine_WindowsUnitTests builds each package of windowsUnits with GOOS=windows
// go test -c and runs it under Wine, in the package's folder as go test does;
// a failing Windows test fails the package's subtest with its output. The
// builds come first, side by side, before the test waits for the prefix.
func TestWine_WindowsUnitTests(t *testing.T) {
	t.Parallel()
	wine.Available(t)
	built := buildUnits(t)
	prefix := wine.New(t)
	full := os.Getenv(EnvFull) == "1"
	// One package at a time: two at once saved a fifth of the time, but
	// store's TestJournal_KilledThenStoreLost, which kills its child 150 ms
	// after starting it, then found no store file to delete.
	for _, u := range windowsUnits {
		t.Run(u.pkg[strings.LastIndex(u.pkg, "/")+1:], func(t *testing.T) {
			b := built[u.pkg]
			if b.err != nil {
				t.Fatal(b.err)
			}
			bin := b.bin
			skip := map[string]string{}
			for name, why := range u.skip {
				skip[name] = "cannot run under Wine: " + why
			}
			if !full {
				for name, why := range u.slow {
					skip[name] = "slow (" + why + "); " + EnvFull + "=1 (make test-windows) runs it"
				}
			}
			args := []string{"-test.v", "-test.count=1", "-test.timeout=4m"}
			if len(skip) > 0 {
				names := make([]string, 0, len(skip))
				for name, why := range skip {
					names = append(names, regexp.QuoteMeta(name))
					t.Logf("skipping %s: %s", name, why)
				}
				sort.Strings(names)
				args = append(args, "-test.skip", "^("+strings.Join(names, "|")+")$")
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			cmd := prefix.Command(ctx, bin.Exe, args...)
			cmd.Dir = bin.Dir
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			runErr := cmd.Run()
			if ctx.Err() != nil {
				runErr = fmt.Errorf("%w: not done within 5 minutes", runErr)
			}
			counts := map[string]int{}
			var failed, skipped []string
			sc := bufio.NewScanner(bytes.NewReader(out.Bytes()))
			for sc.Scan() {
				m := resultRE.FindStringSubmatch(sc.Text())
				if m == nil {
					continue
				}
				counts[m[1]]++
				switch m[1] {
				case "FAIL":
					failed = append(failed, m[2])
				case "SKIP":
					skipped = append(skipped, m[2])
				}
			}
			if len(skipped) > 0 {
				t.Logf("skipped by the tests themselves under Windows: %s", strings.Join(skipped, ", "))
			}
			t.Logf("%s under Wine: %d passed, %d failed, %d skipped", u.pkg, counts["PASS"], counts["FAIL"], counts["SKIP"])
			switch {
			case runErr != nil || len(failed) > 0:
				t.Errorf("the Windows tests of %s failed under Wine (%v): %s\n%s", u.pkg, runErr, strings.Join(failed, ", "), out.String())
			case counts["PASS"] == 0:
				t.Errorf("the Windows test executable of %s ran no test:\n%s", u.pkg, out.String())
			case !bytes.Contains(out.Bytes(), []byte("\nPASS\n")) && !bytes.HasPrefix(out.Bytes(), []byte("PASS\n")):
				t.Errorf("the Windows test executable of %s exited 0 without PASS:\n%s", u.pkg, out.String())
			}
		})
	}
}
