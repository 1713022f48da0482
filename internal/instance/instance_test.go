package instance_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/instance"
)

// hold takes dir's lock as the first agent does, and releases it when the
// test ends.
func hold(t *testing.T, dir string) {
	t.Helper()
	release, err := instance.Take(context.Background(), instance.Start{DataDir: dir, Out: &bytes.Buffer{}})
	if err != nil || release == nil {
		t.Fatalf("the first start: release %v, %v", release != nil, err)
	}
	t.Cleanup(release)
}

// locateAt finds the holder (this process) at url.
func locateAt(url string) func(int) (string, bool) {
	return func(pid int) (string, bool) { return url, pid == os.Getpid() }
}

// TestTake_first: the first start holds the lock and writes its process id;
// once released, the directory can be taken again.
func TestTake_first(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	release, err := instance.Take(context.Background(), instance.Start{DataDir: dir, Out: &bytes.Buffer{}})
	if err != nil || release == nil {
		t.Fatalf("Take = release %v, %v", release != nil, err)
	}
	b, err := os.ReadFile(instance.PIDPath(dir))
	if err != nil || strings.TrimSpace(string(b)) != strconv.Itoa(os.Getpid()) {
		t.Errorf("%s holds %q (%v), want this process's id %d", instance.PIDPath(dir), b, err, os.Getpid())
	}
	if _, err := instance.Lock(dir); !errors.Is(err, instance.ErrHeld) {
		t.Errorf("Lock while held = %v, want ErrHeld", err)
	}
	release()
	again, err := instance.Lock(dir)
	if err != nil {
		t.Fatalf("Lock after release: %v", err)
	}
	again()
}

// TestTake_secondStart: what each kind of second start does on a held
// directory.
func TestTake_secondStart(t *testing.T) {
	t.Parallel()
	const url = "http://127.0.0.1:18787"

	t.Run("the tray opens the running agent's status page", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		hold(t, dir)
		var out bytes.Buffer
		var opened atomic.Value
		release, err := instance.Take(context.Background(), instance.Start{DataDir: dir, Out: &out, Locate: locateAt(url),
			Open: func(u string) error { opened.Store(u); return nil }})
		if release != nil || err != nil {
			t.Fatalf("Take = release %v, %v; want nothing to do", release != nil, err)
		}
		if opened.Load() != url+"/" {
			t.Errorf("opened %v, want the status page %s/", opened.Load(), url)
		}
		want := "El agente CFE ya está funcionando (proceso " + strconv.Itoa(os.Getpid()) + "): se abre su página de estado, " + url + "/"
		if !strings.Contains(out.String(), want) {
			t.Errorf("said %q, want %q", out.String(), want)
		}
	})

	t.Run("an autostarted tray opens nothing", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		hold(t, dir)
		var out bytes.Buffer
		release, err := instance.Take(context.Background(), instance.Start{DataDir: dir, Out: &out, Autostarted: true,
			Locate: locateAt(url), Open: func(u string) error { t.Errorf("opened %s", u); return nil }})
		if release != nil || err != nil {
			t.Fatalf("Take = release %v, %v; want nothing to do", release != nil, err)
		}
		if !strings.Contains(out.String(), "ya está funcionando con estos datos (carpeta "+dir+"): el inicio con la sesión termina sin abrir nada") {
			t.Errorf("said %q", out.String())
		}
	})

	t.Run("a headless start refuses, naming the holder", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		hold(t, dir)
		for _, autostarted := range []bool{false, true} {
			release, err := instance.Take(context.Background(), instance.Start{DataDir: dir, Out: &bytes.Buffer{}, Headless: true,
				Autostarted: autostarted, Locate: locateAt(url), Open: func(u string) error { t.Errorf("opened %s", u); return nil }})
			want := "ya hay un agente ejecutándose con estos datos (carpeta " + dir + ", proceso " + strconv.Itoa(os.Getpid()) +
				", " + url + "): deténgalo antes de iniciar otro"
			if release != nil || cfe.ErrorCode(err) != cfe.EUNAVAILABLE || cfe.ErrorMessage(err) != want || !errors.Is(err, instance.ErrHeld) {
				t.Errorf("autostarted %v: Take = release %v, %v; want EUNAVAILABLE %q", autostarted, release != nil, err, want)
			}
		}
	})

	t.Run("a tray start that cannot find the holder refuses after the wait", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		hold(t, dir)
		var asked atomic.Int32
		start := time.Now()
		release, err := instance.Take(context.Background(), instance.Start{DataDir: dir, Out: &bytes.Buffer{}, Wait: 300 * time.Millisecond,
			Locate: func(int) (string, bool) { asked.Add(1); return "", false },
			Open:   func(u string) error { t.Errorf("opened %s", u); return nil }})
		want := "ya hay un agente ejecutándose con estos datos (carpeta " + dir + "): deténgalo antes de iniciar otro"
		if release != nil || cfe.ErrorCode(err) != cfe.EUNAVAILABLE || cfe.ErrorMessage(err) != want {
			t.Fatalf("Take = release %v, %v; want EUNAVAILABLE %q", release != nil, err, want)
		}
		if asked.Load() < 2 || time.Since(start) < 300*time.Millisecond {
			t.Errorf("Locate asked %d times in %v: the start should retry until its wait ends", asked.Load(), time.Since(start))
		}
	})

	t.Run("a status page that cannot be opened is an error", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		hold(t, dir)
		release, err := instance.Take(context.Background(), instance.Start{DataDir: dir, Out: &bytes.Buffer{}, Locate: locateAt(url),
			Open: func(string) error { return errors.New("no browser") }})
		if release != nil || err == nil || !strings.Contains(err.Error(), "no se pudo abrir la página de estado "+url+"/") {
			t.Errorf("Take = release %v, %v", release != nil, err)
		}
	})
}
