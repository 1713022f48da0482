package profiles

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConfig_Validate_escpos checks the printers that take ESC/POS: a
// valid one of each backend passes, and each broken rule names its field.
func TestConfig_Validate_escpos(t *testing.T) {
	t.Parallel()
	const at = "profiles.caja1.printers.termica."
	yes, no := true, false
	valid := []Printer{
		{Backend: BackendTCP, Protocol: ProtocolESCPOS, Address: "192.168.1.50"},
		{Backend: BackendDevice, Protocol: ProtocolESCPOS, Device: "/dev/usb/lp0", ESCPOS: ESCPOS{PaperMM: 58, Status: &yes}},
		{Backend: BackendCUPS, Protocol: ProtocolESCPOS, Queue: "TM-T20", ESCPOS: ESCPOS{Columns: 42, CodePage: "CP850",
			CodeTable: 2, DPI: 180, QR: "raster", Cut: "full", DrawerKick: true}},
		{Backend: BackendWindows, Protocol: ProtocolESCPOS, Queue: "EPSON TM-T20II Receipt", ESCPOS: ESCPOS{Status: &no}},
		{Backend: BackendLP, Protocol: ProtocolPDF, Queue: "oficina"},
	}
	for _, pr := range valid {
		cfg := validConfig()
		cfg.Profiles["caja1"].Printers["termica"] = pr
		if err := cfg.Validate(); err != nil {
			t.Errorf("%+v: %v", pr, err)
		}
	}
	tcp := func(f func(p *Printer)) Printer {
		p := Printer{Backend: BackendTCP, Protocol: ProtocolESCPOS, Address: "10.0.0.9:9100"}
		f(&p)
		return p
	}
	for _, tc := range []struct {
		name  string
		pr    Printer
		field string
	}{
		{"tcp without address", tcp(func(p *Printer) { p.Address = "" }), "address"},
		{"device without device", Printer{Backend: BackendDevice, Protocol: ProtocolESCPOS}, "device"},
		{"tcp sending PDF", tcp(func(p *Printer) { p.Protocol = "" }), "protocol"},
		{"escpos to a folder", Printer{Backend: BackendDir, Dir: "x", Protocol: ProtocolESCPOS}, "protocol"},
		{"unknown protocol", tcp(func(p *Printer) { p.Protocol = "zpl" }), "protocol"},
		{"address on cups", Printer{Backend: BackendCUPS, Queue: "q", Protocol: ProtocolESCPOS, Address: "10.0.0.9"}, "address"},
		{"escpos options on a PDF printer", Printer{Backend: BackendCUPS, Queue: "q", ESCPOS: ESCPOS{PaperMM: 58}}, "escpos"},
		{"media on escpos", tcp(func(p *Printer) { p.Media = "roll-80" }), "media"},
		{"paper of 76 mm", tcp(func(p *Printer) { p.ESCPOS.PaperMM = 76 }), "escpos.paper_mm"},
		{"48 columns on 58 mm", tcp(func(p *Printer) { p.ESCPOS = ESCPOS{PaperMM: 58, Columns: 48} }), "escpos.columns"},
		{"40 columns on 80 mm", tcp(func(p *Printer) { p.ESCPOS.Columns = 40 }), "escpos.columns"},
		{"unknown code page", tcp(func(p *Printer) { p.ESCPOS.CodePage = "utf-8" }), "escpos.code_page"},
		{"code table over 255", tcp(func(p *Printer) { p.ESCPOS.CodeTable = 256 }), "escpos.code_table"},
		{"dpi of 72", tcp(func(p *Printer) { p.ESCPOS.DPI = 72 }), "escpos.dpi"},
		{"unknown qr", tcp(func(p *Printer) { p.ESCPOS.QR = "imagen" }), "escpos.qr"},
		{"unknown cut", tcp(func(p *Printer) { p.ESCPOS.Cut = "half" }), "escpos.cut"},
		{"status on cups", Printer{Backend: BackendCUPS, Queue: "q", Protocol: ProtocolESCPOS, ESCPOS: ESCPOS{Status: &yes}},
			"escpos.status"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := validConfig()
			cfg.Profiles["caja1"].Printers["termica"] = tc.pr
			wantInvalid(t, cfg.Validate(), at+tc.field)
		})
	}
}

// TestLoad_escposPrinter reads an ESC/POS printer from config.yaml, and
// refuses a misspelt option.
// Serial: it sets the process's environment (clearEnv, t.Setenv), which the package reads.
func TestLoad_escposPrinter(t *testing.T) {
	clearEnv(t)
	const printer = `      mostrador:
        backend: tcp
        protocol: escpos
        address: 192.168.1.50:9100
        escpos:
          paper_mm: 58
          code_page: cp850
          dpi: 180
          qr: raster
          cut: full
          drawer_kick: true
          status: false
`
	text := func(t *testing.T, extra string) string {
		b := readFixture(t, "two-profiles.yaml")
		old := "      mostrador:\n        backend: cups\n        queue: EPSON_TM_T20\n"
		if !strings.Contains(b, old) {
			t.Fatal("the fixture changed")
		}
		return strings.Replace(b, old, printer+extra, 1)
	}
	dir := t.TempDir()
	writeConfig(t, dir, text(t, ""))
	p, _ := mustLoad(t, dir).ActiveProfile()
	pr := p.Printers["mostrador"]
	e := pr.ESCPOS
	if pr.Backend != BackendTCP || pr.Protocol != ProtocolESCPOS || pr.Address != "192.168.1.50:9100" ||
		e.PaperMM != 58 || e.CodePage != "cp850" || e.DPI != 180 || e.QR != "raster" || e.Cut != "full" || !e.DrawerKick {
		t.Errorf("printer %+v", pr)
	}
	if e.Status == nil || *e.Status || e.StatusQuery(BackendTCP) {
		t.Errorf("status: false was not kept: %v", e.Status)
	}
	if (ESCPOS{}).StatusQuery(BackendTCP) != true || (ESCPOS{}).StatusQuery(BackendDevice) != false {
		t.Error("default status: want on for tcp, off for device")
	}

	dir = t.TempDir()
	writeConfig(t, dir, text(t, "          colums: 42\n"))
	_, err := Load(dir)
	wantInvalid(t, err, "profiles.caja1.printers.mostrador.escpos.colums")
}

// readFixture returns testdata/name as text.
func readFixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
