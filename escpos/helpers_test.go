package escpos

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/text/encoding/charmap"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/internal/testtool/thermal"
	"github.com/cfe-agent/cfe-agent/pdf"
)

// Tests decode our bytes with escpos-tools (shared/tools, an independent
// ESC/POS parser in PHP) and read QR images with zbarimg.

// sample returns one of DGI's signed sample CFEs.
func sample(t testing.TB, name string) []byte { return testtool.DGISample(t, name) }

// samples are DGI's signed samples the tests print: an e-Ticket, an
// e-Factura and its credit note, an e-Remito and an e-Resguardo.
var samples = []string{
	"Sob_Ej_Mod_19072016__CFE_101_A1.xml",
	"Sob_Ej_Mod_19072016__CFE_111_A1.xml",
	"Sob_Ej_Mod_19072016__CFE_112_A1.xml",
	"Sob_Ej_Mod_19072016__CFE_181_A1.xml",
	"Sob_Ej_Mod_19072016__CFE_182_A1.xml",
}

// dgiURL is the QR content DGI prescribes for a signed CFE, computed from
// the document by the cfe package.
func dgiURL(t testing.TB, signedXML []byte) string {
	t.Helper()
	c, err := cfe.ParseXML(signedXML)
	if err != nil {
		t.Fatal(err)
	}
	digest, err := cfe.DigestValue(signedXML)
	if err != nil {
		t.Fatal(err)
	}
	return cfe.QRData(c, digest)
}

// tools is escpos-tools' directory.
func tools(t testing.TB) string { return thermal.Tools(t) }

func writeTemp(t testing.TB, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// decodeText returns what esc2text reads in b with code page table.
func decodeText(t testing.TB, b []byte, table *charmap.Charmap) string {
	return thermal.Text(t, b, table)
}

// command is one command escpos-tools' parser found (testdata/dump.php).
type command map[string]any

func (c command) class() string { s, _ := c["class"].(string); return s }

func (c command) int(name string) int { f, _ := c[name].(float64); return int(f) }

func (c command) sub() command { s, _ := c["subCommand"].(map[string]any); return command(s) }

func (c command) data(t testing.TB) []byte {
	s, _ := c["data"].(string)
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// commands lists the commands of b as escpos-tools parses them.
func commands(t testing.TB, b []byte) []command {
	t.Helper()
	dump, err := filepath.Abs(filepath.Join("testdata", "dump.php"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("php", dump, tools(t), writeTemp(t, "r.bin", b)).Output()
	if err != nil {
		t.Fatalf("dump.php: %v", err)
	}
	var cmds []command
	for _, line := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
		var c command
		if err := json.Unmarshal(line, &c); err != nil {
			t.Fatalf("dump.php line %q: %v", line, err)
		}
		cmds = append(cmds, c)
	}
	return cmds
}

// images extracts the raster images of b with escimages and returns the
// PNG files.
func images(t testing.TB, b []byte) []string {
	t.Helper()
	dir := t.TempDir()
	in := filepath.Join(dir, "receipt.bin")
	if err := os.WriteFile(in, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("php", filepath.Join(tools(t), "escimages.php"), "--file", in, "--output-dir", dir,
		"--png").CombinedOutput(); err != nil {
		t.Fatalf("escimages: %v\n%s", err, out)
	}
	files, err := filepath.Glob(filepath.Join(dir, "receipt-*.png"))
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// zbar returns the QR codes zbarimg reads in a picture.
func zbar(t testing.TB, png string) []string {
	t.Helper()
	bin := testtool.Require(t, "zbarimg")
	out, err := exec.Command(bin, "--quiet", "--raw", "-Sdisable", "-Sqrcode.enable", png).Output()
	if err != nil {
		t.Fatalf("zbarimg %s: %v", png, err)
	}
	return strings.Fields(string(out))
}

// mustContain is testtool.MustContain.
func mustContain(t testing.TB, what, text string, want ...string) {
	t.Helper()
	testtool.MustContain(t, what, text, want...)
}

// receiptTexts lists every text a receipt must print: each field of the
// model, and the titles of the parts it has.
func receiptTexts(r *pdf.Receipt) []string {
	out := r.Texts()
	if r.Test {
		out = append(out, pdf.WatermarkText)
	}
	return out
}
