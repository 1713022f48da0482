package scalefill_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/scalefill"
	"github.com/cfe-agent/cfe-agent/store"
)

// TestMain lets the test binary measure a filled store in a process of its
// own (clean memory figures): see measureMain.
func TestMain(m *testing.M) {
	if os.Getenv(measureEnv) != "" {
		os.Exit(measureMain())
	}
	os.Exit(m.Run())
}

const measureEnv = "CFE_SCALEFILL_MEASURE"

var ctx = context.Background()

// plan is the fill of n CFEs: 1 000 a day (a busy till) from 2024-01-02.
func plan(n int) scalefill.Plan {
	return scalefill.Plan{N: n, PerDay: 1000, First: cfe.Date{Year: 2024, Month: time.January, Day: 2}, Seed: 22}
}

var fillRange = scalefill.Range(cfe.Date{Year: 2024, Month: time.January, Day: 1}, cfe.Date{Year: 2099, Month: time.December, Day: 31})

// templates reads the templates back from the templates' store in dir.
func templates(dir string, n int) ([]*cfe.Issued, error) {
	db, err := store.Open(filepath.Join(dir, "templates.db"), store.Options{})
	if err != nil {
		return nil, err
	}
	defer db.Close()
	var out []*cfe.Issued
	for i := range n {
		c, err := db.FindByNumber(ctx, cfe.ETicket, "A", int64(i+1))
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

const nTemplates = 9

func measureMain() int {
	dir := os.Getenv(measureEnv)
	n, _ := strconv.Atoi(os.Getenv("CFE_SCALEFILL_N"))
	tpls, err := templates(dir, nTemplates)
	if err == nil {
		p := plan(n)
		var m scalefill.Measures
		path := filepath.Join(dir, "agent.db")
		m, err = scalefill.Measure(ctx, path, p, scalefill.NewGenerator(p, tpls, fillRange), store.Options{})
		if err == nil {
			m.FullOpen, err = scalefill.MeasureFullOpen(path, store.Options{})
		}
		if err == nil {
			err = json.NewEncoder(os.Stdout).Encode(m)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// TestScale fills a store with CFE_SCALE_N CFEs (default 100 000; a list
// such as "1000000,3000000" fills and measures each in turn) and measures
// it in a fresh process. Files go to CFE_SCALE_DIR (default a temporary
// directory) and are deleted after each size (kept with CFE_SCALE_KEEP=1). It fails when what the store
// answers is wrong (every lookup and day scan is checked against the
// generated CFEs) or when it takes more than 4.5 KB per CFE; the times are
// logged, never asserted (BENCHMARKS.md).
func TestScale(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("fills a store with 100 000 CFEs")
	}
	if raceEnabled {
		withoutRace(t)
		return
	}
	sizes := []int{100_000}
	if v := os.Getenv("CFE_SCALE_N"); v != "" {
		sizes = nil
		for f := range strings.SplitSeq(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n <= 0 {
				t.Fatalf("CFE_SCALE_N=%q: %v", v, err)
			}
			sizes = append(sizes, n)
		}
	}
	base := t.TempDir()
	if d := os.Getenv("CFE_SCALE_DIR"); d != "" {
		base = d
	}
	t.Log("| CFEs | file size / on disk | bytes/CFE on disk | open ms | start ms | /state ms | uuid ms | folio ms | day scan ms | RSS idle / after scan | of which anonymous |")
	for _, n := range sizes {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			dir, err := os.MkdirTemp(base, "scale-")
			if err != nil {
				t.Fatal(err)
			}
			if os.Getenv("CFE_SCALE_KEEP") == "" {
				defer os.RemoveAll(dir)
			}
			p := plan(n)
			_, signedAt := p.Day(0)
			tpls, err := scalefill.Templates(ctx, dir, nTemplates, signedAt)
			if err != nil {
				t.Fatal(err)
			}
			db, err := store.Open(filepath.Join(dir, "agent.db"), store.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if err := db.PutRange(ctx, fillRange); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			if err := scalefill.NewGenerator(p, tpls, fillRange).Fill(ctx, db, 0, n, 5000); err != nil {
				t.Fatal(err)
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			t.Logf("filled %d CFEs in %s", n, time.Since(start).Round(time.Millisecond))

			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), measureEnv+"="+dir, "CFE_SCALEFILL_N="+strconv.Itoa(n))
			cmd.Stderr = os.Stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("measure: %v", err)
			}
			var m scalefill.Measures
			if err := json.Unmarshal(out, &m); err != nil {
				t.Fatalf("measure's answer %q: %v", out, err)
			}
			t.Log(m.Row())
			t.Log("| CFEs | fast start | store.Open | start to healthy | whole-file check ended | RSS at start | store.Open without the record |")
			t.Log(m.StartRow())
			if !m.FastStart {
				t.Error("the first start after the fill's clean close did not start fast")
			}
			if m.BytesPerCFE > 4500 {
				t.Errorf("%.0f bytes per CFE, more than 4.5 KB", m.BytesPerCFE)
			}
		})
	}
}

// withoutRace runs TestScale in a test binary built without the race
// detector, which makes the fill 25 times slower (100 000 CFEs would take
// ten minutes): `make test` runs every test with -race. The code of the fill
// is race-checked by TestScale_small in this binary.
func withoutRace(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "scalefill.test")
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command, to build the test without -race: %v", err)
	}
	build := exec.Command(goTool, "test", "-c", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go test -c: %v\n%s", err, out)
	}
	run := exec.Command(bin, "-test.run", "^TestScale$", "-test.v", "-test.count=1", "-test.timeout=30m")
	out, err := run.CombinedOutput()
	t.Logf("TestScale without the race detector:\n%s", out)
	if err != nil {
		t.Fatalf("TestScale without the race detector: %v", err)
	}
}

// TestScale_small fills and measures a small store in this binary: under
// -race, the fill and the measurement are race-checked here.
func TestScale_small(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := plan(1500)
	p.PerDay = 400
	_, at := p.Day(0)
	tpls, err := scalefill.Templates(ctx, dir, 3, at)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "agent.db")
	db, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.PutRange(ctx, fillRange); err != nil {
		t.Fatal(err)
	}
	g := scalefill.NewGenerator(p, tpls, fillRange)
	if err := g.Fill(ctx, db, 0, p.N, 400); err != nil {
		t.Fatal(err)
	}
	// A fill that does not follow the counter is refused.
	if err := g.Fill(ctx, db, 10, 20, 5); cfe.ErrorCode(err) != cfe.EINVALID {
		t.Errorf("a fill from number 11 on a counter at %d: %v, want EINVALID", p.N, err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	m, err := scalefill.Measure(ctx, path, p, g, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !m.FastStart {
		t.Error("Measure's Open after the fill's clean close did not start fast")
	}
	if m.DayCFEs != 400 || m.N != 1500 {
		t.Errorf("measured %d CFEs with %d in a day, want 1500 and 400", m.N, m.DayCFEs)
	}
	// The generated CFEs differ where real ones would, and only there.
	a, b := g.CFE(0), g.CFE(3) // the same template
	if a.UUID == b.UUID || a.CodSeguridad == b.CodSeguridad || string(a.XML) == string(b.XML) || len(a.XML) != len(b.XML) {
		t.Errorf("CFEs 1 and 4 of one template: uuid %s/%s, code %s/%s, XML lengths %d/%d",
			a.UUID, b.UUID, a.CodSeguridad, b.CodSeguridad, len(a.XML), len(b.XML))
	}
	if again := g.CFE(7); !bytes.Equal(again.XML, g.CFE(7).XML) || again.UUID != g.CFE(7).UUID {
		t.Error("the generator makes a different CFE 8 each time")
	}
}
