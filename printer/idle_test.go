package printer

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/testtool/thermal"
)

// TestManager_CheckIdle_TCP asks the project's thermal test printer for
// its state between jobs: a ready printer passes, one out of paper or with
// its cover open fails with the reason (DLE EOT), one that is gone fails
// with the connection's; nothing is printed, and a printer with status
// queries off is only connected to.
func TestManager_CheckIdle_TCP(t *testing.T) {
	t.Parallel()
	ready, empty, cover, quiet := &thermal.Printer{}, &thermal.Printer{PaperEnd: true}, &thermal.Printer{Cover: true}, &thermal.Printer{}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gone := l.Addr().String()
	l.Close()
	m, err := NewManager(Config{Printers: map[string]PrinterConfig{
		"termica":   {Backend: BackendTCP, Protocol: ProtocolESCPOS, Address: ready.Listen(t), Status: true},
		"sin_papel": {Backend: BackendTCP, Protocol: ProtocolESCPOS, Address: empty.Listen(t), Status: true},
		"tapa":      {Backend: BackendTCP, Protocol: ProtocolESCPOS, Address: cover.Listen(t), Status: true},
		"muda":      {Backend: BackendTCP, Protocol: ProtocolESCPOS, Address: quiet.Listen(t)},
		"apagada":   {Backend: BackendTCP, Protocol: ProtocolESCPOS, Address: gone, Status: true},
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := m.CheckIdle(ctx, "termica"); err != nil {
		t.Errorf("ready printer: %v", err)
	}
	if ready.Queries() != 3 || len(ready.Received()) != 0 {
		t.Errorf("ready printer: %d queries answered (want one DLE EOT 1, 2, 4), %d bytes printed", ready.Queries(), len(ready.Received()))
	}
	for alias, reason := range map[string]string{"sin_papel": "no tiene papel", "tapa": "tiene la tapa abierta",
		"apagada": "no se pudo conectar con la impresora en " + gone} {
		err := m.CheckIdle(ctx, alias)
		if cfe.ErrorCode(err) != cfe.EUNAVAILABLE || !strings.Contains(cfe.ErrorMessage(err), reason) {
			t.Errorf("%s: %v (%s), want EUNAVAILABLE saying %q", alias, err, cfe.ErrorMessage(err), reason)
		}
	}
	if err := m.CheckIdle(ctx, "muda"); err != nil || quiet.Queries() != 0 {
		t.Errorf("status off: %v, %d queries; want a connection only", err, quiet.Queries())
	}
	if err := m.CheckIdle(ctx, "no-existe"); cfe.ErrorCode(err) != cfe.ENOTFOUND {
		t.Errorf("unknown alias: %v", err)
	}
}

// TestManager_CheckIdle_busy: while a job holds the printer, the check
// does not ask it (never a status query inside a job) and says so.
func TestManager_CheckIdle_busy(t *testing.T) {
	t.Parallel()
	p := &thermal.Printer{}
	m, err := NewManager(Config{Printers: map[string]PrinterConfig{
		"termica": {Backend: BackendTCP, Protocol: ProtocolESCPOS, Address: p.Listen(t), Status: true}}})
	if err != nil {
		t.Fatal(err)
	}
	tg, _ := m.resolve("termica")
	release, err := m.acquire(context.Background(), "test", tg.key, "termica") // a job in progress
	if err != nil {
		t.Fatal(err)
	}
	if err := m.CheckIdle(context.Background(), "TERMICA"); !errors.Is(err, ErrBusy) {
		t.Errorf("during a job: %v, want ErrBusy", err)
	}
	if p.Queries() != 0 {
		t.Errorf("the printer was asked %d times during a job", p.Queries())
	}
	release()
	if err := m.CheckIdle(context.Background(), "termica"); err != nil || p.Queries() != 3 {
		t.Errorf("after the job: %v, %d queries", err, p.Queries())
	}
}

// TestManager_CheckIdle_dirAndDevice: a folder printer's folder, a device
// file's presence.
func TestManager_CheckIdle_dirAndDevice(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	dev := filepath.Join(dir, "lp0")
	if err := os.WriteFile(dev, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	m, err := NewManager(Config{Printers: map[string]PrinterConfig{
		"archivo":    {Backend: BackendDir, Dir: dir},
		"sin_folder": {Backend: BackendDir, Dir: filepath.Join(dir, "no")},
		"usb":        {Backend: BackendDevice, Protocol: ProtocolESCPOS, Device: dev},
		"usb_suelta": {Backend: BackendDevice, Protocol: ProtocolESCPOS, Device: filepath.Join(dir, "lp9")},
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for alias, want := range map[string]string{"archivo": "", "usb": "", "sin_folder": cfe.ENOTFOUND, "usb_suelta": cfe.ENOTFOUND} {
		if got := cfe.ErrorCode(m.CheckIdle(ctx, alias)); got != want {
			t.Errorf("%s: code %q, want %q", alias, got, want)
		}
	}
	if b, _ := os.ReadFile(dev); len(b) != 0 {
		t.Errorf("the check wrote %q to the device", b)
	}
}

// TestManager_CheckIdle_CUPS asks a private CUPS server (with its emulated
// IPP printer) for the queue's state: accepting and idle passes; disabled
// with a reason, or rejecting jobs, fails with CUPS's reason; a queue CUPS
// does not have is not found.
func TestManager_CheckIdle_CUPS(t *testing.T) {
	t.Parallel()
	e := startCUPS(t)
	m, err := NewManager(Config{CUPS: CUPSConfig{Host: "127.0.0.1", Port: e.port}, Printers: map[string]PrinterConfig{
		"mostrador": {Backend: BackendCUPS, Queue: rawQueue},
		"otra_cola": {Backend: BackendCUPS, Queue: "no-existe"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := m.CheckIdle(ctx, "mostrador"); err != nil {
		t.Fatalf("idle queue: %v", err)
	}
	if err := m.CheckIdle(ctx, "otra_cola"); cfe.ErrorCode(err) != cfe.ENOTFOUND || !strings.Contains(cfe.ErrorMessage(err), "no-existe") {
		t.Errorf("missing queue: %v", err)
	}
	e.run(t, requireTool(t, "cupsdisable"), "-h", e.server, "-r", "Sin papel", rawQueue)
	err = m.CheckIdle(ctx, "mostrador")
	if cfe.ErrorCode(err) != cfe.EUNAVAILABLE || cfe.ErrorMessage(err) != "la cola «mostrador» de CUPS está detenida (Sin papel)" {
		t.Errorf("disabled queue: %v (%s)", err, cfe.ErrorMessage(err))
	}
	e.run(t, requireTool(t, "cupsenable"), "-h", e.server, rawQueue)
	e.run(t, requireTool(t, "cupsreject"), "-h", e.server, "-r", "Fuera de servicio", rawQueue)
	err = m.CheckIdle(ctx, "mostrador")
	if cfe.ErrorCode(err) != cfe.EUNAVAILABLE || !strings.Contains(cfe.ErrorMessage(err), "no acepta trabajos") {
		t.Errorf("rejecting queue: %v (%s)", err, cfe.ErrorMessage(err))
	}
	e.run(t, requireTool(t, "cupsaccept"), "-h", e.server, rawQueue)
	if err := m.CheckIdle(ctx, "mostrador"); err != nil {
		t.Errorf("queue accepting again: %v", err)
	}
}

// TestQueueProblem: IPP's reasons of severity error and offline are
// problems; reports and warnings are not.
func TestQueueProblem(t *testing.T) {
	t.Parallel()
	q := Queue{Name: "q", State: "idle", Accepting: true}
	for reasons, bad := range map[string]bool{"": false, "media-low-warning": false, "media-empty-error": true,
		"offline-report": true, "cover-open-error,other-report": true} {
		q.Reasons = nil
		if reasons != "" {
			q.Reasons = strings.Split(reasons, ",")
		}
		if err := queueProblem("test", q); (err != nil) != bad {
			t.Errorf("reasons %q: %v, want problem %v", reasons, err, bad)
		}
	}
}
