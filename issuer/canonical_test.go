package issuer_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
)

// TestMarshalXML_IsCanonical proves what the issuer relies on when it hands
// cfe.MarshalXML's bytes to the signer as canonical (Signer.Sign): for every
// type, with text that needs escaping (& < > quotes, CR, LF, TAB, accents and
// a character outside the BMP), the bytes equal libxml2's C14N 1.0 form of
// themselves.
func TestMarshalXML_IsCanonical(t *testing.T) {
	t.Parallel()
	bin := testtool.Require(t, "xmllint")
	nasty, _ := json.Marshal("Yerba \"mate\" & <azúcar> 'ñandú'\r\n\t1 kg 🧉")
	for _, typ := range cfe.ElectronicTypes() {
		t.Run(typ.String(), func(t *testing.T) {
			t.Parallel()
			body := requestJSON(typ, "x")
			for _, s := range []string{"Yerba mate 1 kg", "Lana peinada", "Cajas de yerba 1 kg", "Lana sucia", "Dirección General Impositiva", "Importadora del Plata SA"} {
				body = strings.ReplaceAll(body, `"`+s+`"`, string(nasty))
			}
			doc, err := decode(t, body).ToCFE(cfe.IssueParams{Emisor: testEmisor, Tax: cfe.DefaultTaxConfig(), SignedAt: testNow})
			if err != nil {
				t.Fatal(err)
			}
			res := testRange(typ, "A", 1, 100, cfe.DateOf(testNow).AddDays(30))
			doc.IdDoc.Serie, doc.IdDoc.Nro, doc.CAEData = res.Serie, 7, res.CAEData()
			unsigned, err := cfe.MarshalXML(doc)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(unsigned, []byte("&amp;")) || !bytes.Contains(unsigned, []byte("&#xD;")) {
				t.Fatalf("the escaped text did not reach the document:\n%s", unsigned)
			}
			f := filepath.Join(t.TempDir(), "cfe.xml")
			if err := os.WriteFile(f, unsigned, 0o600); err != nil {
				t.Fatal(err)
			}
			canonical, err := exec.Command(bin, "--nonet", "--c14n", f).Output()
			if err != nil {
				t.Fatalf("xmllint --c14n: %v", err)
			}
			if !bytes.Equal(unsigned, canonical) {
				t.Errorf("cfe.MarshalXML is not canonical:\n got %s\nc14n %s", unsigned, canonical)
			}
		})
	}
}
