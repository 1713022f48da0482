package printer

import (
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// holdingPrinter is a raw socket printer (port 9100 style) that takes the
// job's bytes and never hangs up, so CUPS keeps the queue printing.
func holdingPrinter(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { _ = c.Close() })
			go func() { _, _ = io.Copy(io.Discard, c) }()
		}
	}()
	return l.Addr().String()
}

// Serial: one subtest sets CUPS_SERVER in the process's environment
// (t.Setenv), which NewManager reads.
func TestManager_SystemPrinters(t *testing.T) {
	e := startCUPS(t)
	lpadmin := requireTool(t, "lpadmin")
	// "deposito" is stopped by its administrator with a reason; "cocina" is
	// busy with a job its printer never finishes; the raw queue is idle and
	// the server's default.
	e.run(t, lpadmin, "-h", e.server, "-p", "deposito", "-v", e.ipp, "-m", "raw", "-E")
	e.run(t, requireTool(t, "cupsdisable"), "-h", e.server, "-r", "Sin papel", "deposito")
	e.run(t, lpadmin, "-h", e.server, "-p", "cocina", "-v", "socket://"+holdingPrinter(t), "-m", "raw", "-E")
	e.run(t, lpadmin, "-h", e.server, "-d", rawQueue)
	doc := filepath.Join(t.TempDir(), "ticket.pdf")
	if err := os.WriteFile(doc, testPDF, 0o600); err != nil {
		t.Fatal(err)
	}
	e.run(t, requireTool(t, "lp"), "-h", e.server, "-d", "cocina", doc)

	list := func(t *testing.T, m *Manager) map[string]SystemPrinter {
		t.Helper()
		source, printers, err := m.SystemPrinters(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if source != BackendCUPS {
			t.Errorf("source %q, want %q", source, BackendCUPS)
		}
		byName := map[string]SystemPrinter{}
		for _, p := range printers {
			byName[p.Name] = p
		}
		return byName
	}
	m, err := NewManager(Config{CUPS: CUPSConfig{Host: "127.0.0.1", Port: e.port}, RawQueues: BackendCUPS})
	if err != nil {
		t.Fatal(err)
	}

	t.Run("states and reasons as CUPS reports them", func(t *testing.T) {
		var got map[string]SystemPrinter
		waitFor(t, "the busy queue printing", func() bool {
			got = list(t, m)
			return got["cocina"].State == PrinterPrinting
		})
		tests := []struct {
			name                 string
			state, reason        string
			accepting, isDefault bool
		}{
			{rawQueue, PrinterIdle, "", true, true},
			{"deposito", PrinterStopped, "Sin papel", true, false},
			{"cocina", PrinterPrinting, "", true, false},
		}
		if len(got) != len(tests) {
			t.Errorf("listed %d printers, want %d: %+v", len(got), len(tests), got)
		}
		for _, tt := range tests {
			p, ok := got[tt.name]
			if !ok {
				t.Errorf("%s not listed", tt.name)
				continue
			}
			if p.State != tt.state || p.Reason != tt.reason || p.Accepting != tt.accepting || p.Default != tt.isDefault {
				t.Errorf("%s = %+v, want state %q reason %q accepting %v default %v", tt.name, p, tt.state,
					tt.reason, tt.accepting, tt.isDefault)
			}
		}
	})

	t.Run("a queue that rejects jobs", func(t *testing.T) {
		e.run(t, requireTool(t, "cupsreject"), "-h", e.server, "-r", "Mantenimiento", "deposito")
		defer e.run(t, requireTool(t, "cupsaccept"), "-h", e.server, "deposito")
		if p := list(t, m)["deposito"]; p.Accepting {
			t.Errorf("deposito = %+v, want not accepting", p)
		}
	})

	t.Run("CUPS_SERVER names the server when the configuration does not", func(t *testing.T) {
		t.Setenv(EnvCUPSServer, e.server)
		m, err := NewManager(Config{RawQueues: BackendCUPS})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := list(t, m)[rawQueue]; !ok {
			t.Errorf("%s not listed through CUPS_SERVER=%s", rawQueue, e.server)
		}
	})

	t.Run("CUPS unreachable", func(t *testing.T) {
		down, err := NewManager(Config{CUPS: CUPSConfig{Host: "127.0.0.1", Port: freePort(t)}, RawQueues: BackendCUPS})
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = down.SystemPrinters(context.Background())
		wantError(t, err, cfe.EUNAVAILABLE, "no se pudo consultar CUPS")
	})
}

func TestServerFromEnv(t *testing.T) {
	t.Parallel()
	tests := []struct {
		value string
		host  string
		port  int
		ok    bool
	}{
		{"", "", 0, false},
		{"/run/cups/cups.sock", "", 0, false},
		{"printsrv", "printsrv", 0, true},
		{"printsrv:8631", "printsrv", 8631, true},
		{"[::1]:631", "::1", 631, true},
		{"printsrv:puerto", "", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.value, func(t *testing.T) {
			t.Parallel()
			// The value as serverFromEnv reads it from CUPS_SERVER (the
			// variable itself: TestManager_SystemPrinters).
			host, port, ok := parseCUPSServer(tt.value)
			if host != tt.host || port != tt.port || ok != tt.ok {
				t.Errorf("serverFromEnv() with CUPS_SERVER=%q = %q, %d, %v; want %q, %d, %v", tt.value, host, port, ok, tt.host, tt.port, tt.ok)
			}
		})
	}
}
