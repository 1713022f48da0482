package emulator

import (
	"bytes"
	"crypto/x509"
	"encoding/base64"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/cfe-agent/cfe-agent/assets"
	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/cfe/xsdvalid"
	"github.com/cfe-agent/cfe-agent/dgi"
	"github.com/cfe-agent/cfe-agent/signer"
)

// What DGI checks of an envelope (Formato del Sobre v05; RESP 4.2) before
// it answers ACKSobre, and of each CFE (RESP 4.3, 4.4) before it answers
// ACKCFE. The envelope's checks give S codes (the envelope is refused, BS);
// a CFE's give E codes (BE) or, for a contingency receipt, C codes (CE).

// parsedEnvelope is an envelope read for DGI's checks.
type parsedEnvelope struct {
	RUCEmisor   string
	RutReceptor string
	IdEmisor    int64
	CantCFE     int
	Fecha       time.Time
	Cert        *x509.Certificate
	CFEs        [][]byte // each CFE element cut out byte for byte
}

// motives collects reasons with DGI's glosas.
type motives []dgi.Motivo

func (m *motives) add(table map[string]string, code, format string, args ...any) {
	for _, x := range *m {
		if x.Codigo == code {
			return // one line per code
		}
	}
	d := fmt.Sprintf(format, args...)
	if len(d) > 500 {
		d = d[:497] + "..."
	}
	*m = append(*m, dgi.Motivo{Codigo: code, Glosa: table[code], Detalle: d})
}

// checkEnvelope applies the envelope's checks: the S codes it breaks, and
// the envelope as far as it could be read (nil when not at all). tokenRUC
// is the RUC of the certificate that signed the SOAP request.
func checkEnvelope(doc []byte, tokenRUC string) (*parsedEnvelope, motives) {
	var ms motives
	s := dgi.EnvelopeReasons
	if len(doc) > cfe.MaxEnvelopeBytes {
		ms.add(s, "S07", "el sobre ocupa %d bytes y se admiten hasta %d", len(doc), cfe.MaxEnvelopeBytes)
		return nil, ms
	}
	env, car, err := cutEnvelope(doc)
	if err != nil {
		ms.add(s, "S01", "%s", err)
		return nil, ms
	}
	if schema, err := xsdvalid.DGI(assets.SchemaEnvelope); err == nil {
		var es xsdvalid.Errors
		if err := schema.Validate(doc); errors.As(err, &es) {
			for _, e := range es {
				if !strings.HasPrefix(e.Path, "/EnvioCFE/CFE") { // a CFE's own errors are its E05
					ms.add(s, "S04", "%s", e.Error())
				}
			}
		}
	}
	if env.CantCFE != len(env.CFEs) {
		ms.add(s, "S05", "la carátula dice %d CFE y el sobre contiene %d", env.CantCFE, len(env.CFEs))
	}
	if len(env.CFEs) == 0 || len(env.CFEs) > cfe.MaxEnvelopeCFEs {
		ms.add(s, "S04", "el sobre contiene %d CFE y admite de 1 a %d", len(env.CFEs), cfe.MaxEnvelopeCFEs)
	}
	switch {
	case env.RutReceptor != cfe.RUCDGI:
		ms.add(s, "S02", "el sobre va dirigido al RUC %s y DGI es el RUC %s", env.RutReceptor, cfe.RUCDGI)
	case env.RUCEmisor != tokenRUC:
		ms.add(s, "S02", "el sobre es del RUC emisor %s y el envío está firmado por el RUC %s", env.RUCEmisor, tokenRUC)
	}
	cert, err := x509.ParseCertificate(car.cert)
	switch {
	case err != nil:
		ms.add(s, "S03", "el certificado de la carátula no se puede leer")
	case signer.CertRUC(cert) != env.RUCEmisor:
		ms.add(s, "S02", "el certificado de la carátula es del RUC %q y el sobre del RUC %s", signer.CertRUC(cert), env.RUCEmisor)
	case !env.Fecha.IsZero() && (env.Fecha.Before(cert.NotBefore) || env.Fecha.After(cert.NotAfter)):
		ms.add(s, "S03", "el certificado de la carátula no estaba vigente el %s (vigente del %s al %s)",
			env.Fecha.Format(time.RFC3339), cert.NotBefore.Format(time.DateOnly), cert.NotAfter.Format(time.DateOnly))
	default:
		env.Cert = cert
	}
	for i, c := range env.CFEs {
		h, err := cfe.ReadCFEHead(c)
		if err != nil {
			continue // the CFE's E05
		}
		if h.RUCEmisor != env.RUCEmisor {
			ms.add(s, "S02", "el CFE %d (%s) es del RUC %s y el sobre del RUC %s", i+1, h, h.RUCEmisor, env.RUCEmisor)
		}
		if env.Cert != nil {
			if other := keyInfoCert(c); other != nil && !other.Equal(env.Cert) {
				ms.add(s, "S06", "el CFE %d (%s) está firmado con el certificado «%s» y la carátula trae «%s»", i+1, h,
					other.Subject.CommonName, env.Cert.Subject.CommonName)
			}
		}
	}
	return env, ms
}

// caratula is the raw Caratula as cutEnvelope reads it.
type caratula struct {
	cert []byte
}

// cutEnvelope reads an EnvioCFE: its Caratula's fields, leniently (the XSD
// says what is malformed), and each CFE element byte for byte. It fails only
// when the bytes are not a well-formed EnvioCFE at all.
func cutEnvelope(b []byte) (*parsedEnvelope, caratula, error) {
	var car caratula
	d := xml.NewDecoder(bytes.NewReader(b))
	env := &parsedEnvelope{IdEmisor: -1, CantCFE: -1}
	depth := 0
	sawRoot, sawCaratula := false, false
	for {
		off := d.InputOffset()
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, car, fmt.Errorf("el sobre no es XML bien formado: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch {
			case depth == 0:
				if t.Name.Local != cfe.EnvelopeDGI.Root() || t.Name.Space != cfe.NamespaceCFE {
					return nil, car, fmt.Errorf("el documento no es un sobre EnvioCFE de %s: su raíz es <%s>", cfe.NamespaceCFE, t.Name.Local)
				}
				sawRoot = true
				depth++
			case depth == 1 && t.Name.Local == "Caratula" && !sawCaratula:
				sawCaratula = true
				var x struct {
					RutReceptor, RUCEmisor, Idemisor, CantCFE, Fecha, X509Certificate string
				}
				if err := d.DecodeElement(&x, &t); err != nil {
					return nil, car, fmt.Errorf("la carátula no se puede leer: %w", err)
				}
				env.RutReceptor, env.RUCEmisor = strings.TrimSpace(x.RutReceptor), strings.TrimSpace(x.RUCEmisor)
				if n, err := strconv.ParseInt(strings.TrimSpace(x.Idemisor), 10, 64); err == nil {
					env.IdEmisor = n
				}
				if n, err := strconv.Atoi(strings.TrimSpace(x.CantCFE)); err == nil {
					env.CantCFE = n
				}
				if t, err := dgi.ParseFechaHora(x.Fecha); err == nil {
					env.Fecha = t
				}
				car.cert, _ = base64.StdEncoding.DecodeString(strings.Join(strings.Fields(x.X509Certificate), ""))
			case depth == 1 && t.Name.Local == "CFE":
				if err := d.Skip(); err != nil {
					return nil, car, fmt.Errorf("el sobre no es XML bien formado: %w", err)
				}
				env.CFEs = append(env.CFEs, b[off:d.InputOffset()])
			default:
				if err := d.Skip(); err != nil {
					return nil, car, fmt.Errorf("el sobre no es XML bien formado: %w", err)
				}
			}
		case xml.EndElement:
			depth--
		}
	}
	if !sawRoot {
		return nil, car, errors.New("el documento está vacío")
	}
	return env, car, nil
}

// keyInfoCert returns the certificate a signed CFE's KeyInfo carries, nil
// when it carries none that can be read.
func keyInfoCert(doc []byte) *x509.Certificate {
	i := bytes.LastIndex(doc, []byte("X509Certificate>"))
	if i < 0 {
		return nil
	}
	j := bytes.LastIndex(doc[:i], []byte("X509Certificate>"))
	if j < 0 {
		return nil
	}
	val := doc[j+len("X509Certificate>") : i]
	if k := bytes.LastIndexByte(val, '<'); k >= 0 {
		val = val[:k]
	}
	der, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(string(val)), ""))
	if err != nil {
		return nil
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		return nil
	}
	return c
}

// sandboxCAE matches the CAE numbers signer.SandboxRanges makes:
// "90" + year (2 digits) + "999" + type (3 digits) + "0".
var sandboxCAE = regexp.MustCompile(`^90(\d\d)999(\d\d\d)0$`)

// Sandbox ranges' shape (signer.SandboxRanges): serie A, 1 to 1,000,000,
// valid two years from the authorization.
const (
	sandboxSerie = "A"
	// hostedSerie is the serie the hosted sandbox gives the same generated
	// ranges for its own emitir and anular (sandbox/issuing's hostedSerie),
	// so that its numbers never collide with its agents': the emulator
	// accepts both, as the provider sends both.
	hostedSerie = "H"
	// tillSerieLast is the last serie of a company's further tills: a
	// company with several tills numbers one serie per till, A to G
	// (docs/reporte-diario-proveedor.md), so that one daily report of the
	// RUC adds up.
	tillSerieLast = "G"
	sandboxDNro   = 1
	sandboxHNro   = 1_000_000
	sandboxYears  = 2
)

// sandboxSerieOK reports whether the sandbox's generated CAEs authorize
// serie s: A to G (tills), H (the hosted sandbox's own).
func sandboxSerieOK(s string) bool {
	return s == hostedSerie || (len(s) == 1 && s >= sandboxSerie && s <= tillSerieLast)
}

// checkCAE applies the CAE's rules to a parsed CFE: E09 (RUC or type not
// the CAE's), E03 (number or CAE data not the CAE's), E07 (signature date
// outside the CAE's validity). The emulator knows the CAEs of the sandbox's
// generated ranges (signer.SandboxRanges, as the agent's sandbox profile and
// the hosted sandbox make them): the CAE number tells the type and the
// year of authorization, the range is serie A (B to G for further tills of
// a company, H for the hosted sandbox's own CFEs) 1–1,000,000, valid two
// years.
func checkCAE(c *cfe.CFE) (code, detalle string) {
	g := c.CAEData
	m := sandboxCAE.FindStringSubmatch(g.CAEID)
	if m == nil {
		return "E03", fmt.Sprintf("el CAE %s no es uno de los que DGI autorizó (el emulador conoce los CAE de prueba del sandbox)", g.CAEID)
	}
	year, _ := strconv.Atoi(m[1])
	tipo, _ := strconv.Atoi(m[2])
	if cfe.Type(tipo) != c.IdDoc.TipoCFE {
		return "E09", fmt.Sprintf("el CAE %s autoriza el tipo %d y el CFE es de tipo %d", g.CAEID, tipo, int(c.IdDoc.TipoCFE))
	}
	hNro := int64(sandboxHNro)
	info, _ := c.IdDoc.TipoCFE.Info()
	if info.Contingency {
		hNro = signer.SandboxContingencySize // a batch of paper forms
	}
	if g.DNro != sandboxDNro || g.HNro != hNro || !sandboxSerieOK(c.IdDoc.Serie) {
		return "E03", fmt.Sprintf("el CAE %s autoriza las series %s a %s (%s en el servicio) del %d al %d y el CFE declara la serie %s del %d al %d",
			g.CAEID, sandboxSerie, tillSerieLast, hostedSerie, sandboxDNro, hNro, c.IdDoc.Serie, g.DNro, g.HNro)
	}
	if c.IdDoc.Nro < sandboxDNro || c.IdDoc.Nro > hNro {
		return "E03", fmt.Sprintf("el número %d está fuera del rango del CAE %s (%d a %d)", c.IdDoc.Nro, g.CAEID, sandboxDNro, hNro)
	}
	authorized := cfe.DateOf(g.FecVenc.Time(time.UTC).AddDate(-sandboxYears, 0, 0))
	if authorized.Year%100 != year {
		return "E03", fmt.Sprintf("el vencimiento %s no corresponde al CAE %s (autorizado en 20%02d)", g.FecVenc, g.CAEID, year)
	}
	if info.Contingency {
		// A paper form is keyed in and signed after it was filled in: its
		// date, not its signature's, must fall within the constancia's
		// validity (the agent's rule, docs/contingencia.md; DGI's texts
		// do not say which date C03 looks at).
		if f := c.IdDoc.FchEmis; f.Before(authorized) || f.After(g.FecVenc) {
			return "C03", fmt.Sprintf("el formulario tiene fecha %s y la constancia %s rige del %s al %s", f, g.CAEID, authorized, g.FecVenc)
		}
		return "", ""
	}
	signed := cfe.DateOf(c.TmstFirma.In(cfe.Montevideo))
	if signed.Before(authorized) || signed.After(g.FecVenc) {
		return "E07", fmt.Sprintf("el CFE se firmó el %s y el CAE %s rige del %s al %s", signed, g.CAEID, authorized, g.FecVenc)
	}
	return "", ""
}

// judgeCFE applies a CFE's own checks (all but E02, which needs what DGI
// already holds): the verdict, with its motives. cert is the envelope's
// certificate (nil when it could not be read: the envelope is refused
// anyway).
func judgeCFE(ordinal int, doc []byte, cert *x509.Certificate, knob *Rejection) verdict {
	v := verdict{Ordinal: ordinal, Estado: dgi.CFEReceived}
	var ms motives
	table, prefix := dgi.CFERejections, "E"
	contingency := false
	if h, err := cfe.ReadCFEHead(doc); err == nil {
		v.Tipo, v.Serie, v.Nro = h.Type, h.Serie, h.Nro
		if info, ok := h.Type.Info(); ok && info.Contingency {
			contingency, table, prefix = true, dgi.CFCObservations, "C"
		}
	}
	code := func(n string) string { return prefix + n }
	parsed, perr := cfe.ParseXML(doc)
	if parsed != nil {
		v.FechaCFE, v.TmstCFE = parsed.IdDoc.FchEmis, parsed.TmstFirma
	}
	if knob != nil {
		ms.add(table, knob.Codigo, "%s", knob.Detalle)
	}
	if schema, err := xsdvalid.DGI(assets.SchemaCFE); err == nil {
		if err := schema.Validate(doc); err != nil {
			ms.add(table, code("05"), "%s", cfe.ErrorMessage(err))
		}
	}
	if perr != nil {
		ms.add(table, code("05"), "%s", cfe.ErrorMessage(perr))
	} else if err := cfe.Validate(parsed, cfe.DefaultTaxConfig()); err != nil {
		// A contingency receipt is judged by the rules of the type it
		// replaces: C05 "No cumple validaciones de Formato comprobantes".
		ms.add(table, code("05"), "%s", validationDetail(err))
	}
	if _, err := signer.Verify(doc, signer.VerifyOptions{Certificate: cert}); cert == nil || err != nil {
		d := "el CFE no está firmado con el certificado de la carátula"
		if err != nil {
			d = cfe.ErrorMessage(err)
		}
		ms.add(table, code("04"), "%s", d)
	}
	if parsed != nil && contingency {
		if over, total := aboveHabitual(parsed); over {
			ms.add(table, "C06", "el total del CFC es %s pesos, por encima de los %s que el emulador tiene por habituales", total.StringFixed(2), cfcHabitualMax.StringFixed(0))
		}
	}
	if parsed != nil {
		if c, d := checkCAE(parsed); c != "" {
			if contingency {
				c = "C03" // the contingency constancia is not authorized
			}
			ms.add(table, c, "%s", d)
		}
	}
	if len(ms) > 0 {
		v.Motivos = ms
		v.Estado = dgi.CFERejected
		if contingency {
			v.Estado = dgi.CFCObserved
		}
	}
	return v
}

// cfcHabitualMax is the emulator's stand-in for C06 "Importe informado en
// el CFC excede montos habituales": DGI compares a contingency receipt's
// amount with what it knows of the company (how, its texts do not say);
// the emulator observes a CFC whose total exceeds a million pesos, the
// kind of typing error (a zero too many) a technician makes keying in a
// paper form, and which a corrected resend clears.
var cfcHabitualMax = decimal.NewFromInt(1_000_000)

// aboveHabitual reports whether a CFC's total, in pesos, exceeds
// cfcHabitualMax, and the total.
func aboveHabitual(c *cfe.CFE) (bool, decimal.Decimal) {
	t := c.Totales
	total := t.MntTotal
	if total == nil {
		total = t.MntPagar
	}
	if total == nil {
		return false, decimal.Zero
	}
	pesos := *total
	if t.TpoCambio != nil && t.TpoCambio.IsPositive() {
		pesos = pesos.Mul(*t.TpoCambio)
	}
	return pesos.GreaterThan(cfcHabitualMax), pesos
}

// validationDetail writes cfe.Validate's failures in one Detalle.
func validationDetail(err error) string {
	fs := cfe.ErrorFields(err)
	if len(fs) == 0 {
		return cfe.ErrorMessage(err)
	}
	parts := make([]string, 0, len(fs))
	for _, f := range fs {
		parts = append(parts, f.Campo+": "+f.Mensaje)
	}
	return strings.Join(parts, "; ")
}
