package cfe_test

import (
	"bytes"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
)

// sampleCFEs reads the CFEs cut out of DGI's example envelope (signed by DGI's
// test company 219999830019), by type.
func sampleCFEs(t *testing.T) map[int][]byte {
	t.Helper()
	dir := filepath.Join(testtool.SharedDir(t), "dgi", "samples", "extracted-cfe")
	out := map[int][]byte{}
	for name, typ := range map[string]int{"101_A1": 101, "102_A1": 102, "111_A1": 111, "112_A1": 112, "181_A1": 181, "281_XA953001": 281} {
		b, err := os.ReadFile(filepath.Join(dir, "Sob_Ej_Mod_19072016__CFE_"+name+".xml"))
		if err != nil {
			t.Fatal(err)
		}
		out[typ] = b
	}
	return out
}

func sampleCertDER(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testtool.SharedDir(t), "dgi", "samples", "extracted-cfe", "Sob_Ej_Mod_19072016__caratula_cert.pem"))
	if err != nil {
		t.Fatal(err)
	}
	blk, _ := pem.Decode(b)
	if blk == nil {
		t.Fatal("no PEM block")
	}
	return blk.Bytes
}

const sampleRUC = "219999830019"

var envelopeTime = time.Date(2026, time.March, 2, 10, 0, 30, 0, cfe.Montevideo)

// Both layouts validate against DGI's XSDs, and every CFE comes back out of
// the envelope byte for byte as it went in.
func TestBuildEnvelope_RoundTrip(t *testing.T) {
	t.Parallel()
	cfes := sampleCFEs(t)
	cert := sampleCertDER(t)
	for _, c := range []struct {
		name   string
		kind   cfe.EnvelopeKind
		rut    string
		types  []int
		adenda []string
		xsd    string
	}{
		{"to DGI", cfe.EnvelopeDGI, cfe.RUCDGI, []int{101, 111, 181, 281}, nil, "EnvioCFE.xsd"},
		{"to the receiver", cfe.EnvelopeReceiver, "214844360018", []int{111, 112, 181}, []string{"Gracias & <hasta pronto>", "", "Entregar en Rincón 500"}, "EnvioCFE_entreEmpresas.xsd"},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := &cfe.Envelope{Kind: c.kind, Caratula: cfe.Caratula{RutReceptor: c.rut, RUCEmisor: sampleRUC, IdEmisor: 42,
				Fecha: envelopeTime, Certificate: cert}}
			for i, typ := range c.types {
				ec := cfe.EnvelopeCFE{XML: cfes[typ]}
				if c.adenda != nil {
					ec.Adenda = c.adenda[i]
				}
				env.CFEs = append(env.CFEs, ec)
			}
			b, err := cfe.BuildEnvelope(env)
			if err != nil {
				t.Fatal(err)
			}
			testtool.MustValidateXSD(t, testtool.XSD(t, c.xsd), b)
			for _, want := range []string{"<RutReceptor>" + c.rut + "</RutReceptor>", "<RUCEmisor>" + sampleRUC + "</RUCEmisor>",
				"<Idemisor>42</Idemisor>", "<CantCFE>" + string(rune('0'+len(c.types))) + "</CantCFE>", "<Fecha>2026-03-02T10:00:30-03:00</Fecha>"} {
				if !bytes.Contains(b, []byte(want)) {
					t.Errorf("envelope lacks %s", want)
				}
			}
			got, err := cfe.ParseEnvelope(b)
			if err != nil {
				t.Fatal(err)
			}
			if got.Kind != c.kind || got.Caratula.IdEmisor != 42 || got.Caratula.CantCFE != len(c.types) ||
				!got.Caratula.Fecha.Equal(envelopeTime) || !bytes.Equal(got.Caratula.Certificate, cert) || len(got.CFEs) != len(c.types) {
				t.Fatalf("parsed %+v", got.Caratula)
			}
			for i, ec := range got.CFEs {
				if !bytes.Equal(ec.XML, env.CFEs[i].XML) {
					t.Errorf("CFE %d is not byte-exact", i+1)
				}
				if ec.Adenda != env.CFEs[i].Adenda {
					t.Errorf("CFE %d adenda %q, want %q", i+1, ec.Adenda, env.CFEs[i].Adenda)
				}
			}
		})
	}
}

// DGI's own example envelope (ISO-8859-1, CRLF, prefixed elements) parses,
// and its CFEs come out equal to the ones cut from it by hand.
func TestParseEnvelope_DGISample(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join(testtool.SharedDir(t), "dgi", "samples", "Sob_219999830019_Ej_Mod_19072016.xml"))
	if err != nil {
		t.Fatal(err)
	}
	env, err := cfe.ParseEnvelope(raw)
	if err != nil {
		t.Fatal(err)
	}
	if env.Kind != cfe.EnvelopeDGI || env.Caratula.CantCFE != 8 || len(env.CFEs) != 8 || env.Caratula.IdEmisor != 2020 ||
		!bytes.Equal(env.Caratula.Certificate, sampleCertDER(t)) {
		t.Fatalf("%+v, %d CFEs", env.Caratula, len(env.CFEs))
	}
	for typ, want := range sampleCFEs(t) {
		found := false
		for _, ec := range env.CFEs {
			found = found || bytes.Equal(ec.XML, bytes.TrimRight(want, "\r\n"))
		}
		if !found {
			t.Errorf("the %d cut from the envelope differs from extracted-cfe", typ)
		}
	}
}

func TestBuildEnvelope_Rules(t *testing.T) {
	t.Parallel()
	cfes := sampleCFEs(t)
	cert := sampleCertDER(t)
	base := func(kind cfe.EnvelopeKind, xmls ...[]byte) *cfe.Envelope {
		e := &cfe.Envelope{Kind: kind, Caratula: cfe.Caratula{RutReceptor: cfe.RUCDGI, RUCEmisor: sampleRUC, IdEmisor: 1, Fecha: envelopeTime, Certificate: cert}}
		for _, x := range xmls {
			e.CFEs = append(e.CFEs, cfe.EnvelopeCFE{XML: x})
		}
		return e
	}
	unsigned := bytes.Replace(cfes[111], []byte("<Signature"), []byte("<Firma"), 1)
	unsigned = bytes.Replace(unsigned, []byte("</Signature>"), []byte("</Firma>"), 1)
	many := make([][]byte, cfe.MaxEnvelopeCFEs+1)
	for i := range many {
		many[i] = cfes[101]
	}
	for _, c := range []struct {
		name  string
		env   *cfe.Envelope
		campo string
		msg   string
	}{
		{"no CFE", base(cfe.EnvelopeDGI), "CFE", "al menos un CFE"},
		{"251 CFEs", base(cfe.EnvelopeDGI, many...), "CFE", "hasta 250"},
		{"bad receiver RUC", func() *cfe.Envelope {
			e := base(cfe.EnvelopeDGI, cfes[101])
			e.Caratula.RutReceptor = "214844360011"
			return e
		}(), "Caratula/RutReceptor", "RUC válido"},
		{"Idemisor over 10 digits", func() *cfe.Envelope { e := base(cfe.EnvelopeDGI, cfes[101]); e.Caratula.IdEmisor = 1e10; return e }(), "Caratula/Idemisor", "0 a 9999999999"},
		{"no certificate", func() *cfe.Envelope { e := base(cfe.EnvelopeDGI, cfes[101]); e.Caratula.Certificate = nil; return e }(), "Caratula/X509Certificate", "certificado"},
		{"another issuer", func() *cfe.Envelope {
			e := base(cfe.EnvelopeDGI, cfes[101])
			e.Caratula.RUCEmisor = cfe.RUCDGI
			return e
		}(), "CFE[1]", "un solo emisor"},
		{"repeated CFE", base(cfe.EnvelopeDGI, cfes[101], cfes[101]), "CFE[2]", "ya está en el sobre (CFE[1])"},
		{"unsigned CFE", base(cfe.EnvelopeDGI, unsigned), "CFE[1]", "no está firmado"},
		{"not a CFE", base(cfe.EnvelopeDGI, []byte(`<Reporte xmlns="http://cfe.dgi.gub.uy"/>`)), "CFE[1]", "<Reporte>"},
		{"CFE with text after it", base(cfe.EnvelopeDGI, append(bytes.Clone(cfes[101]), "x"...)), "CFE[1]", "después del elemento CFE"},
		{"CFE with an element after it", base(cfe.EnvelopeDGI, append(bytes.Clone(cfes[101]), "<x/>"...)), "CFE[1]", "después del elemento CFE"},
		{"CFE cut short", base(cfe.EnvelopeDGI, cfes[101][:len(cfes[101])-40]), "CFE[1]", "está incompleto"},
		{"CFE with a comment before it", base(cfe.EnvelopeDGI, append([]byte("<!-- x -->"), cfes[101]...)), "CFE[1]", "comentarios"},
		{"CFE whose signature is not its last element", base(cfe.EnvelopeDGI, bytes.Replace(cfes[101], []byte("</ns0:CFE>"), []byte("<ns0:Otro/></ns0:CFE>"), 1)), "CFE[1]", "no está firmado"},
		{"CFE in Latin-1", base(cfe.EnvelopeDGI, append([]byte(`<?xml version="1.0" encoding="ISO-8859-1"?>`), cfes[101]...)), "CFE[1]", "UTF-8"},
		{"adenda to DGI", func() *cfe.Envelope { e := base(cfe.EnvelopeDGI, cfes[101]); e.CFEs[0].Adenda = "x"; return e }(), "CFE[1]", "no va en el sobre a DGI"},
		{"receiver: CFE to a person", base(cfe.EnvelopeReceiver, cfes[101]), "CFE[1]", "receptor: documento de tipo 3"},
		{"receiver: contingency", base(cfe.EnvelopeReceiver, cfes[281]), "CFE[1]", "contingencia"},
		{"receiver: another RUC", func() *cfe.Envelope {
			e := base(cfe.EnvelopeReceiver, cfes[111])
			e.Caratula.RutReceptor = "211111110015"
			return e
		}(), "CFE[1]", "no está dirigido al RUC 211111110015"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := cfe.BuildEnvelope(c.env)
			if cfe.ErrorCode(err) != cfe.EINVALID {
				t.Fatalf("err %v, want EINVALID", err)
			}
			for _, f := range cfe.ErrorFields(err) {
				if f.Campo == c.campo && strings.Contains(f.Mensaje, c.msg) {
					return
				}
			}
			t.Errorf("fields %+v lack %s: …%s…", cfe.ErrorFields(err), c.campo, c.msg)
		})
	}
}

func TestParseEnvelope_Rejects(t *testing.T) {
	t.Parallel()
	cfes := sampleCFEs(t)
	good, err := cfe.BuildEnvelope(&cfe.Envelope{Kind: cfe.EnvelopeDGI, Caratula: cfe.Caratula{RutReceptor: cfe.RUCDGI, RUCEmisor: sampleRUC,
		IdEmisor: 7, Fecha: envelopeTime, Certificate: sampleCertDER(t)}, CFEs: []cfe.EnvelopeCFE{{XML: cfes[101]}, {XML: cfes[111]}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		doc  []byte
		msg  string
	}{
		{"CantCFE does not match", bytes.Replace(good, []byte("<CantCFE>2</CantCFE>"), []byte("<CantCFE>3</CantCFE>"), 1), "dice 3 y el sobre contiene 2"},
		{"not an envelope", cfes[101], "no es un sobre"},
		{"not XML", []byte("hola"), "sobre"},
		{"a CFE outside the namespace", bytes.Replace(good, []byte(`xmlns="http://cfe.dgi.gub.uy" version="1.0">`), []byte(`version="1.0">`), 1), "espacio de nombres"},
		{"UTF-16", append([]byte(`<?xml version="1.0" encoding="UTF-16"?>`), good[len(`<?xml version="1.0" encoding="UTF-8"?>`):]...), "UTF-16"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := cfe.ParseEnvelope(c.doc)
			if cfe.ErrorCode(err) != cfe.EINVALID || !strings.Contains(err.Error(), c.msg) {
				t.Errorf("err %v, want EINVALID with %q", err, c.msg)
			}
		})
	}
}

// FuzzParseEnvelope: any input either is refused with EINVALID or parses into
// an envelope that builds again into one with the same CFEs, byte for byte.
func FuzzParseEnvelope(f *testing.F) {
	raw, err := os.ReadFile(filepath.Join(testtool.SharedDir(f), "dgi", "samples", "Sob_219999830019_Ej_Mod_19072016.xml"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(raw)
	f.Add([]byte(`<EnvioCFE_entreEmpresas xmlns="http://cfe.dgi.gub.uy" version="1.0"><Caratula version="1.0"/><CFE_Adenda><Adenda>x</Adenda></CFE_Adenda></EnvioCFE_entreEmpresas>`))
	f.Fuzz(func(t *testing.T, b []byte) {
		env, err := cfe.ParseEnvelope(b)
		if err != nil {
			if cfe.ErrorCode(err) != cfe.EINVALID {
				t.Fatalf("error %v is not EINVALID", err)
			}
			return
		}
		again, err := cfe.BuildEnvelope(env)
		if err != nil {
			t.Fatalf("a parsed envelope does not build: %v", err)
		}
		env2, err := cfe.ParseEnvelope(again)
		if err != nil || len(env2.CFEs) != len(env.CFEs) {
			t.Fatalf("rebuilt envelope: %v", err)
		}
		for i := range env.CFEs {
			if !bytes.Equal(env.CFEs[i].XML, env2.CFEs[i].XML) || env.CFEs[i].Adenda != env2.CFEs[i].Adenda {
				t.Fatalf("CFE %d changed in a rebuild", i+1)
			}
		}
	})
}

// ReadCFEHead reads the whole document: a CFE broken after its Encabezado
// is refused, and a whole one gives the same head with or without its XML
// declaration.
func TestReadCFEHead_Whole(t *testing.T) {
	t.Parallel()
	x := sampleCFEs(t)[111]
	h, err := cfe.ReadCFEHead(x)
	if err != nil {
		t.Fatal(err)
	}
	if h.Type != 111 || h.Serie != "A" || h.Nro != 1 || h.RUCEmisor != sampleRUC || h.TipoDocRecep != 2 || !h.Signed {
		t.Errorf("head %+v", h)
	}
	if d, err := cfe.ReadCFEHead(append([]byte(`<?xml version="1.0" encoding="UTF-8"?>`+"\n"), x...)); err != nil || d != h {
		t.Errorf("with a declaration: %+v, %v", d, err)
	}
	i := bytes.Index(x, []byte("<ns0:Detalle>"))
	if i < 0 {
		t.Fatal("no Detalle in the sample")
	}
	broken := append(bytes.Clone(x[:i]), append([]byte("<ns0:Detalle><ns0:Item>"), x[i+len("<ns0:Detalle>"):]...)...)
	if _, err := cfe.ReadCFEHead(broken); cfe.ErrorCode(err) != cfe.EINVALID || !strings.Contains(err.Error(), "bien formado") {
		t.Errorf("a CFE broken after its head: %v, want EINVALID (bien formado)", err)
	}
}

// CheckEnvelope reads and checks the CFEs once; Build then writes, under
// another Idemisor and Fecha, byte for byte what BuildEnvelope writes for
// them, and refuses a Caratula out of range. CheckEnvelope refuses what
// BuildEnvelope refuses.
func TestCheckEnvelope_Build(t *testing.T) {
	t.Parallel()
	cfes := sampleCFEs(t)
	env := &cfe.Envelope{Kind: cfe.EnvelopeDGI, Caratula: cfe.Caratula{RutReceptor: cfe.RUCDGI, RUCEmisor: sampleRUC, IdEmisor: 1,
		Fecha: envelopeTime, Certificate: sampleCertDER(t)}, CFEs: []cfe.EnvelopeCFE{{XML: cfes[101]}, {XML: cfes[111]}, {XML: cfes[181]}}}
	checked, err := cfe.CheckEnvelope(env)
	if err != nil {
		t.Fatal(err)
	}
	later := envelopeTime.Add(90 * time.Second)
	got, err := checked.Build(4_000_123, later)
	if err != nil {
		t.Fatal(err)
	}
	numbered := *env
	numbered.Caratula.IdEmisor, numbered.Caratula.Fecha = 4_000_123, later
	want, err := cfe.BuildEnvelope(&numbered)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) || !bytes.Contains(got, []byte("<Idemisor>4000123</Idemisor>")) {
		t.Errorf("Build differs from BuildEnvelope:\n%.600s\n%.600s", got, want)
	}
	if _, err := checked.Build(cfe.MaxEnvelopeID+1, later); cfe.ErrorCode(err) != cfe.EINVALID || !strings.Contains(err.Error(), "Idemisor") {
		t.Errorf("an Idemisor of 11 digits: %v", err)
	}
	if _, err := checked.Build(1, time.Date(2010, 1, 1, 0, 0, 0, 0, cfe.Montevideo)); cfe.ErrorCode(err) != cfe.EINVALID || !strings.Contains(err.Error(), "Fecha") {
		t.Errorf("a Fecha before 2011: %v", err)
	}
	env.CFEs = append(env.CFEs, cfe.EnvelopeCFE{XML: cfes[101]})
	if _, err := cfe.CheckEnvelope(env); cfe.ErrorCode(err) != cfe.EINVALID || !strings.Contains(err.Error(), "ya está en el sobre") {
		t.Errorf("a repeated CFE: %v", err)
	}
	if again, err := checked.Build(4_000_123, later); err != nil || !bytes.Equal(again, got) {
		t.Errorf("a change to the caller's envelope after CheckEnvelope changed the checked one: %v", err)
	}
}
