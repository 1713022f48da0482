package printer

import (
	"bytes"
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

// receiptBytes stands for one copy of an ESC/POS receipt: reset, text, cut.
var receiptBytes = []byte("\x1b@\x1bt\x13e-Ticket A-1\nTotal a pagar UYU 536,00\n\x1dVB\x03")

// TestTCP_PrintRaw prints to a fake thermal printer on loopback: every copy
// arrives untouched, and a printer out of paper or with its cover open is
// refused with the reason before anything is sent.
func TestTCP_PrintRaw(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		printer *thermal.Printer
		status  bool
		reason  string // "" = printed
		sent    bool   // the job's bytes reached the printer
		queries int
	}{
		{name: "ready", status: true, sent: true, queries: 6},
		{name: "status off sends no query", status: false, sent: true},
		{name: "paper end", printer: &thermal.Printer{PaperEnd: true}, status: true, reason: "no tiene papel", queries: 3},
		{name: "cover open", printer: &thermal.Printer{Cover: true}, status: true, reason: "tiene la tapa abierta", queries: 3},
		{name: "paper ends during the job", printer: &thermal.Printer{AfterQueries: 3}, status: true,
			reason: "no tiene papel durante la impresión", sent: true, queries: 6},
		{name: "hangs up on the query", printer: &thermal.Printer{HangUp: true}, status: true,
			reason: "no respondió a la consulta de estado"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := tc.printer
			if f == nil {
				f = &thermal.Printer{}
			}
			addr := f.Listen(t)
			p := &TCP{Address: addr, Status: tc.status}
			res, err := p.PrintRaw(context.Background(), RawJob{Name: "e-Ticket A-1", Data: receiptBytes, Copies: 2})
			if tc.reason == "" {
				if err != nil {
					t.Fatalf("PrintRaw: %v", err)
				}
				if res.Backend != BackendTCP || res.Printer != addr || res.Copies != 2 || res.State != StateProcessing {
					t.Errorf("result %+v", res)
				}
			} else {
				if cfe.ErrorCode(err) != cfe.EUNAVAILABLE || !strings.Contains(cfe.ErrorMessage(err), tc.reason) ||
					!strings.Contains(cfe.ErrorMessage(err), addr) {
					t.Fatalf("error %v (%s), want EUNAVAILABLE saying %q and the address", err, cfe.ErrorMessage(err), tc.reason)
				}
			}
			// The connection is closed when PrintRaw returns; the fake may
			// still be reading what was sent before.
			waitFor(t, "the printer to read the job", func() bool {
				return !tc.sent || len(f.Received()) >= 2*len(receiptBytes)
			})
			want := []byte(nil)
			if tc.sent {
				want = bytes.Repeat(receiptBytes, 2)
			}
			if got := f.Received(); !bytes.Equal(got, want) {
				t.Errorf("printer received %q, want %q", got, want)
			}
			if got := f.Queries(); got != tc.queries {
				t.Errorf("%d status queries answered, want %d", got, tc.queries)
			}
		})
	}
	t.Run("nobody listening", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		_, err = (&TCP{Address: addr}).PrintRaw(context.Background(), RawJob{Data: receiptBytes})
		if cfe.ErrorCode(err) != cfe.EUNAVAILABLE || !strings.Contains(cfe.ErrorMessage(err), "no se pudo conectar") {
			t.Errorf("error %v", err)
		}
	})
	t.Run("bad job", func(t *testing.T) {
		for _, job := range []RawJob{{}, {Data: receiptBytes, Copies: 11}} {
			if _, err := (&TCP{Address: "127.0.0.1:9"}).PrintRaw(context.Background(), job); cfe.ErrorCode(err) != cfe.EINVALID {
				t.Errorf("%+v: error %v, want EINVALID", job, err)
			}
		}
	})
}

// TestDevice_PrintRaw writes to a device file (a plain file stands for a USB
// printer that only takes bytes).
func TestDevice_PrintRaw(t *testing.T) {
	t.Parallel()
	dev := filepath.Join(t.TempDir(), "lp0")
	if err := os.WriteFile(dev, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := (&Device{Path: dev}).PrintRaw(context.Background(), RawJob{Data: receiptBytes, Copies: 3})
	if err != nil {
		t.Fatal(err)
	}
	if res.Backend != BackendDevice || res.Copies != 3 || res.Printer != dev {
		t.Errorf("result %+v", res)
	}
	if got, _ := os.ReadFile(dev); !bytes.Equal(got, bytes.Repeat(receiptBytes, 3)) {
		t.Errorf("device holds %q", got)
	}
	_, err = (&Device{Path: filepath.Join(t.TempDir(), "usb", "lp9")}).PrintRaw(context.Background(), RawJob{Data: receiptBytes})
	if cfe.ErrorCode(err) != cfe.ENOTFOUND || !strings.Contains(cfe.ErrorMessage(err), "lp9") {
		t.Errorf("missing device: %v", err)
	}
}

// TestManager_PrintRaw routes ESC/POS by alias to its transport, refuses
// the wrong protocol either way, and validates the new settings.
func TestManager_PrintRaw(t *testing.T) {
	t.Parallel()
	f := &thermal.Printer{}
	addr := f.Listen(t)
	dir := t.TempDir()
	m, err := NewManager(Config{Printers: map[string]PrinterConfig{
		"caja":    {Backend: BackendTCP, Protocol: ProtocolESCPOS, Address: addr, Status: true},
		"oficina": {Backend: BackendDir, Dir: dir},
	}, RawQueues: BackendCUPS})
	if err != nil {
		t.Fatal(err)
	}
	if m.Protocol("CAJA") != ProtocolESCPOS || m.Protocol("oficina") != ProtocolPDF || m.Protocol("cola") != ProtocolPDF {
		t.Error("Protocol misreports the printers")
	}
	if _, err := m.PrintRaw(context.Background(), "Caja", RawJob{Data: receiptBytes}); err != nil {
		t.Fatalf("PrintRaw: %v", err)
	}
	waitFor(t, "the receipt", func() bool { return bytes.Equal(f.Received(), receiptBytes) })
	if _, err := m.PrintRaw(context.Background(), "oficina", RawJob{Data: receiptBytes}); cfe.ErrorCode(err) != cfe.EINVALID {
		t.Errorf("ESC/POS to a PDF printer: %v, want EINVALID", err)
	}
	if _, err := m.Print(context.Background(), "caja", Job{PDF: []byte("%PDF-1.4")}); cfe.ErrorCode(err) != cfe.EINVALID {
		t.Errorf("PDF to an ESC/POS printer: %v, want EINVALID", err)
	}
	if _, err := m.PrintRaw(context.Background(), "nadie", RawJob{Data: receiptBytes}); err == nil {
		t.Error("an unknown raw queue took ESC/POS")
	}

	for _, tc := range []struct {
		pc    PrinterConfig
		field string
	}{
		{PrinterConfig{Backend: BackendTCP, Protocol: ProtocolESCPOS}, "printers.p.address"},
		{PrinterConfig{Backend: BackendDevice, Protocol: ProtocolESCPOS}, "printers.p.device"},
		{PrinterConfig{Backend: BackendTCP, Address: "10.0.0.5"}, "printers.p.protocol"},
		{PrinterConfig{Backend: BackendDir, Dir: dir, Protocol: ProtocolESCPOS}, "printers.p.protocol"},
		{PrinterConfig{Backend: BackendCUPS, Queue: "q", Protocol: "zpl"}, "printers.p.protocol"},
	} {
		_, err := NewManager(Config{Printers: map[string]PrinterConfig{"p": tc.pc}})
		var e *cfe.Error
		if !errorAs(err, &e) || len(e.Fields) != 1 || e.Fields[0].Campo != tc.field {
			t.Errorf("%+v: %v, want one error on %s", tc.pc, err, tc.field)
		}
	}
}

func errorAs(err error, e **cfe.Error) bool {
	return errors.As(err, e)
}

// TestTCP_Check connects and asks the status without printing.
func TestTCP_Check(t *testing.T) {
	t.Parallel()
	ready, empty := &thermal.Printer{}, &thermal.Printer{PaperEnd: true}
	if err := (&TCP{Address: ready.Listen(t), Status: true}).Check(context.Background()); err != nil {
		t.Errorf("a ready printer: %v", err)
	}
	err := (&TCP{Address: empty.Listen(t), Status: true}).Check(context.Background())
	if cfe.ErrorCode(err) != cfe.EUNAVAILABLE || !strings.Contains(cfe.ErrorMessage(err), "no tiene papel") {
		t.Errorf("a printer without paper: %v", err)
	}
	if ready.Queries() != 3 || len(ready.Received())+len(empty.Received()) != 0 {
		t.Errorf("Check sent %d queries and %d bytes", ready.Queries(), len(ready.Received())+len(empty.Received()))
	}
	if got := tcpAddress("10.0.0.5"); got != "10.0.0.5:9100" {
		t.Errorf("tcpAddress without a port = %q", got)
	}
}

// TestParseStatus reads DLE EOT answers as Epson documents them.
func TestParseStatus(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in      []byte
		problem string
		low     bool
		bad     bool
	}{
		{in: []byte{0x12, 0x12, 0x12}},
		{in: []byte{0x16, 0x12, 0x12}},            // drawer pin high: not a problem
		{in: []byte{0x12, 0x12, 0x1e}, low: true}, // paper near end: still prints
		{in: []byte{0x1a, 0x32, 0x72}, problem: "no tiene papel"},
		{in: []byte{0x1a, 0x16, 0x12}, problem: "tiene la tapa abierta"},
		{in: []byte{0x1a, 0x36, 0x72}, problem: "no tiene papel y tiene la tapa abierta"},
		{in: []byte{0x1a, 0x52, 0x12}, problem: "indica un error"},
		{in: []byte{0x1a, 0x12, 0x12}, problem: "fuera de línea"},
		{in: []byte{0x12, 0x12}, bad: true},
		{in: []byte{0x00, 0x12, 0x12}, bad: true}, // not an answer: fixed bits wrong
		{in: []byte{0x12, 0x92, 0x12}, bad: true},
	} {
		st, err := parseStatus(tc.in)
		if tc.bad {
			if err == nil {
				t.Errorf("% x: no error", tc.in)
			}
			continue
		}
		if err != nil {
			t.Errorf("% x: %v", tc.in, err)
			continue
		}
		if p := st.Problem(); (tc.problem == "") != (p == "") || !strings.Contains(p, tc.problem) || st.PaperLow != tc.low {
			t.Errorf("% x: %+v, problem %q; want %q, low %v", tc.in, st, p, tc.problem, tc.low)
		}
	}
}
