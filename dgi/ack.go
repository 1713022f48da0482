package dgi

import (
	"bytes"
	"crypto/x509"
	"encoding/base64"
	"encoding/xml"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cfe-agent/cfe-agent/assets"
	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/cfe/xsdvalid"
	"github.com/cfe-agent/cfe-agent/signer"
)

// States of DGI's acknowledgements (RESP §3; DGITypes.xsd's EstadoACK*Type).
const (
	// Envelope (ACKSobre).
	EnvelopeReceived = "AS" // Sobre recibido
	EnvelopeRejected = "BS" // Sobre rechazado
	FileRejected     = "BA" // Archivo rechazado (XSD only; envelope and report)
	// CFE (ACKCFE).
	CFEReceived  = "AE" // Comprobante recibido
	CFERejected  = "BE" // Comprobante rechazado (CFE)
	CFCObserved  = "CE" // Comprobante observado (CFC, contingency)
	CFERequoted  = "FE" // Comprobante reliquidado (XSD only)
	ReportOK     = "AR" // Reporte recibido
	ReportFailed = "BR" // Reporte rechazado
)

// ACKSobre is DGI's answer to an envelope (RESP 3.2, ACKSobre.xsd).
type ACKSobre struct {
	RUCReceptor  string // DGI's RUC
	RUCEmisor    string
	IDRespuesta  int64
	NomArch      string
	FecHRecibido time.Time
	IDEmisor     int64 // the envelope's Idemisor
	IDReceptor   int64 // DGI's number of the envelope: ask with it
	CantidadCFE  int
	Tmst         time.Time
	Estado       string // EnvelopeReceived, EnvelopeRejected or FileRejected
	Motivos      []Motivo
	// Token and Fechahora (ParamConsulta): ask for the CFEs' verdict
	// (EnvelopeStatus) with IDReceptor and Token, from Fechahora on.
	Token     string
	Fechahora time.Time
	// XML is the signed document as DGI sent it: keep it.
	XML []byte
}

// Received reports whether DGI took the envelope (AS).
func (a *ACKSobre) Received() bool { return a.Estado == EnvelopeReceived }

// Duplicate reports whether DGI refused the envelope as one it already has
// (S08): it holds the CFEs, do not send them again.
func (a *ACKSobre) Duplicate() bool {
	return a.Estado != EnvelopeReceived && hasMotivo(a.Motivos, "S08")
}

// ACKCFE is DGI's verdict on the CFEs of an envelope (RESP 3.3,
// ACKCFE_DGI.xsd). The verdict may come in several messages: CantResponden
// says how many this one answers.
type ACKCFE struct {
	RUCReceptor         string
	RUCEmisor           string
	IDRespuesta         int64
	NomArch             string
	FecHRecibido        time.Time
	IDEmisor            int64
	IDReceptor          int64
	CantenSobre         int
	CantResponden       int
	CantCFEAceptados    int
	CantCFERechazados   int
	CantCFCAceptados    int
	CantCFCObservados   int
	CantOtrosRechazados int
	Tmst                time.Time
	CFEs                []CFEVerdict
	XML                 []byte
}

// CFEVerdict is DGI's verdict on one CFE (ACKCFE_Det).
type CFEVerdict struct {
	Ordinal  int // its place in the envelope, from 1
	TipoCFE  cfe.Type
	Serie    string
	Nro      int64
	FechaCFE cfe.Date
	TmstCFE  time.Time
	Estado   string   // CFEReceived, CFERejected, CFCObserved or CFERequoted
	Motivos  []Motivo // rejection (E..) or observation (C..) reasons
	// Original, set with E02 (the CFE already existed), names the envelope
	// DGI first received it in (InfoRespOri).
	Original *OriginalEnvelope
}

// OriginalEnvelope is InfoRespOri: the answer to the envelope that first
// carried a CFE DGI reports as already received (E02).
type OriginalEnvelope struct {
	IDRespuesta int64
	IDEmisor    int64
	IDReceptor  int64
	Token       string
}

// ACKRepDiario is DGI's answer to a daily report (RESP 3.1,
// ACKRepDiario.xsd).
type ACKRepDiario struct {
	RUCReceptor  string
	RUCEmisor    string
	NomArch      string
	FecHRecibido time.Time
	IDEmisor     int64
	IDReceptor   int64
	Tmst         time.Time
	Estado       string // ReportOK, ReportFailed or FileRejected
	Motivos      []Motivo
	XML          []byte
}

func hasMotivo(ms []Motivo, code string) bool {
	for _, m := range ms {
		if m.Codigo == code {
			return true
		}
	}
	return false
}

// ackCheck is what every ACK document goes through before it is read: DGI's
// XSD, then DGI's enveloped signature by the pinned certificate.
func ackCheck(doc []byte, schema string, cert *x509.Certificate) error {
	s, err := xsdvalid.DGI(schema)
	if err != nil {
		return fmt.Errorf("no se pudo cargar el esquema %s: %w", schema, err)
	}
	if err := s.Validate(doc); err != nil {
		return fmt.Errorf("%w: la respuesta no cumple %s: %s", ErrBadAnswer, schema, cfe.ErrorMessage(err))
	}
	if _, err := signer.Verify(doc, signer.VerifyOptions{Certificate: cert}); err != nil {
		return fmt.Errorf("%w: la firma de DGI de la respuesta no es válida: %s", ErrBadAnswer, cfe.ErrorMessage(err))
	}
	if err := embeddedCertIs(doc, cert); err != nil {
		return err
	}
	return nil
}

// embeddedCertIs checks that the X509Certificate values of the document's
// signature, if any, are cert: an answer that names another signer is not
// DGI's, even if cert's key happens to verify it.
func embeddedCertIs(doc []byte, cert *x509.Certificate) error {
	d := xml.NewDecoder(bytes.NewReader(doc))
	in := false
	for {
		tok, err := d.Token()
		if err != nil {
			return nil // read fully (or already checked by the schema)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			in = t.Name.Local == "X509Certificate" && t.Name.Space == nsDS
		case xml.CharData:
			if in {
				der, err := decodeB64(string(t))
				if err != nil {
					return fmt.Errorf("%w: el certificado de la firma de la respuesta no es base64", ErrBadAnswer)
				}
				c, err := x509.ParseCertificate(der)
				if err != nil || !c.Equal(cert) {
					return fmt.Errorf("%w: la respuesta está firmada con otro certificado que el de DGI configurado", ErrBadAnswer)
				}
			}
		case xml.EndElement:
			in = false
		}
	}
}

// XML shapes of the ACKs (namespace http://cfe.dgi.gub.uy).

type motivoXML struct {
	Motivo  string `xml:"Motivo"`
	Glosa   string `xml:"Glosa"`
	Detalle string `xml:"Detalle"`
}

func motivos(ms []motivoXML) []Motivo {
	out := make([]Motivo, 0, len(ms))
	for _, m := range ms {
		out = append(out, Motivo{Codigo: trimXMLSpace(m.Motivo), Glosa: trimXMLSpace(m.Glosa), Detalle: trimXMLSpace(m.Detalle)})
	}
	return out
}

type caratulaXML struct {
	RUCReceptor         string `xml:"RUCReceptor"`
	RUCEmisor           string `xml:"RUCEmisor"`
	IDRespuesta         string `xml:"IDRespuesta"`
	NomArch             string `xml:"NomArch"`
	FecHRecibido        string `xml:"FecHRecibido"`
	IDEmisor            string `xml:"IDEmisor"`
	IDReceptor          string `xml:"IDReceptor"`
	CantidadCFE         string `xml:"CantidadCFE"`
	CantenSobre         string `xml:"CantenSobre"`
	CantResponden       string `xml:"CantResponden"`
	CantCFEAceptados    string `xml:"CantCFEAceptados"`
	CantCFERechazados   string `xml:"CantCFERechazados"`
	CantCFCAceptados    string `xml:"CantCFCAceptados"`
	CantCFCObservados   string `xml:"CantCFCObservados"`
	CantOtrosRechazados string `xml:"CantOtrosRechazados"`
	Tmst                string `xml:"Tmst"`
}

// fieldReader converts the text fields of an ACK, keeping the first error.
type fieldReader struct{ err error }

func (r *fieldReader) int(name, s string) int64 {
	s = trimXMLSpace(s)
	if s == "" {
		return 0
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil && r.err == nil {
		r.err = fmt.Errorf("%s %q no es un número", name, s)
	}
	return n
}

func (r *fieldReader) time(name, s string) time.Time {
	s = trimXMLSpace(s)
	if s == "" {
		return time.Time{}
	}
	t, err := ParseFechaHora(s)
	if err != nil && r.err == nil {
		r.err = fmt.Errorf("%s: %w", name, err)
	}
	return t
}

// ParseFechaHora reads DGI's FechaHoraType: a date-time with a zone, or
// without one (DGI's examples), read as Montevideo's time.
func ParseFechaHora(s string) (time.Time, error) {
	s = trimXMLSpace(s)
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	t, err := time.ParseInLocation("2006-01-02T15:04:05.999999999", s, cfe.Montevideo)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q no es una fecha y hora", s)
	}
	return t, nil
}

// FormatFechaHora writes t as DGI's FechaHoraType, in Montevideo's zone with
// its offset.
func FormatFechaHora(t time.Time) string {
	return t.In(cfe.Montevideo).Format("2006-01-02T15:04:05-07:00")
}

func (c caratulaXML) common(r *fieldReader) (ruc, emisor string, idResp int64, nom string, rec time.Time, idEm, idRec int64, tmst time.Time) {
	return trimXMLSpace(c.RUCReceptor), trimXMLSpace(c.RUCEmisor), r.int("IDRespuesta", c.IDRespuesta), trimXMLSpace(c.NomArch),
		r.time("FecHRecibido", c.FecHRecibido), r.int("IDEmisor", c.IDEmisor), r.int("IDReceptor", c.IDReceptor), r.time("Tmst", c.Tmst)
}

// ParseACKSobre checks and reads an ACKSobre: DGI's XSD, then the enveloped
// signature, made by cert. Errors wrap ErrBadAnswer.
func ParseACKSobre(doc []byte, cert *x509.Certificate) (*ACKSobre, error) {
	if err := ackCheck(doc, assets.SchemaACKSobre, cert); err != nil {
		return nil, err
	}
	var x struct {
		Caratula caratulaXML `xml:"Caratula"`
		Detalle  struct {
			Estado         string      `xml:"Estado"`
			MotivosRechazo []motivoXML `xml:"MotivosRechazo"`
			ParamConsulta  *struct {
				Token     string `xml:"Token"`
				Fechahora string `xml:"Fechahora"`
			} `xml:"ParamConsulta"`
		} `xml:"Detalle"`
	}
	if err := xml.Unmarshal(doc, &x); err != nil {
		return nil, fmt.Errorf("%w: ACKSobre ilegible: %w", ErrBadAnswer, err)
	}
	var r fieldReader
	a := &ACKSobre{XML: bytes.Clone(doc), Estado: trimXMLSpace(x.Detalle.Estado), Motivos: motivos(x.Detalle.MotivosRechazo)}
	a.RUCReceptor, a.RUCEmisor, a.IDRespuesta, a.NomArch, a.FecHRecibido, a.IDEmisor, a.IDReceptor, a.Tmst = x.Caratula.common(&r)
	a.CantidadCFE = int(r.int("CantidadCFE", x.Caratula.CantidadCFE))
	if p := x.Detalle.ParamConsulta; p != nil {
		a.Token = strings.Join(strings.Fields(p.Token), "")
		a.Fechahora = r.time("Fechahora", p.Fechahora)
	}
	if r.err != nil {
		return nil, fmt.Errorf("%w: ACKSobre: %w", ErrBadAnswer, r.err)
	}
	if a.Estado == EnvelopeReceived && a.Token == "" {
		return nil, fmt.Errorf("%w: ACKSobre recibido (AS) sin Token ni Fechahora para consultar los CFE", ErrBadAnswer)
	}
	return a, nil
}

// ParseACKCFE checks and reads an ACKCFE as ParseACKSobre does.
func ParseACKCFE(doc []byte, cert *x509.Certificate) (*ACKCFE, error) {
	if err := ackCheck(doc, assets.SchemaACKCFE, cert); err != nil {
		return nil, err
	}
	var x struct {
		Caratula caratulaXML `xml:"Caratula"`
		Det      []struct {
			Ordinal   string      `xml:"Nro_ordinal"`
			TipoCFE   string      `xml:"TipoCFE"`
			Serie     string      `xml:"Serie"`
			NroCFE    string      `xml:"NroCFE"`
			FechaCFE  string      `xml:"FechaCFE"`
			TmstCFE   string      `xml:"TmstCFE"`
			Estado    string      `xml:"Estado"`
			Rechazos  []motivoXML `xml:"MotivosRechazoCF"`
			ObsCFC    []motivoXML `xml:"ObsCFC"`
			InfoOrigi *struct {
				IDRespSobre     string `xml:"IDRespSobre"`
				IDEmisorSobre   string `xml:"IDEmisorSobre"`
				IDReceptorSobre string `xml:"IDReceptorSobre"`
				IDTokenSobre    string `xml:"IDTokenSobre"`
			} `xml:"InfoRespOri"`
		} `xml:"ACKCFE_Det"`
	}
	if err := xml.Unmarshal(doc, &x); err != nil {
		return nil, fmt.Errorf("%w: ACKCFE ilegible: %w", ErrBadAnswer, err)
	}
	var r fieldReader
	a := &ACKCFE{XML: bytes.Clone(doc)}
	c := x.Caratula
	a.RUCReceptor, a.RUCEmisor, a.IDRespuesta, a.NomArch, a.FecHRecibido, a.IDEmisor, a.IDReceptor, a.Tmst = c.common(&r)
	a.CantenSobre = int(r.int("CantenSobre", c.CantenSobre))
	a.CantResponden = int(r.int("CantResponden", c.CantResponden))
	a.CantCFEAceptados = int(r.int("CantCFEAceptados", c.CantCFEAceptados))
	a.CantCFERechazados = int(r.int("CantCFERechazados", c.CantCFERechazados))
	a.CantCFCAceptados = int(r.int("CantCFCAceptados", c.CantCFCAceptados))
	a.CantCFCObservados = int(r.int("CantCFCObservados", c.CantCFCObservados))
	a.CantOtrosRechazados = int(r.int("CantOtrosRechazados", c.CantOtrosRechazados))
	for _, d := range x.Det {
		v := CFEVerdict{
			Ordinal: int(r.int("Nro_ordinal", d.Ordinal)),
			TipoCFE: cfe.Type(r.int("TipoCFE", d.TipoCFE)),
			Serie:   trimXMLSpace(d.Serie),
			Nro:     r.int("NroCFE", d.NroCFE),
			TmstCFE: r.time("TmstCFE", d.TmstCFE),
			Estado:  trimXMLSpace(d.Estado),
			Motivos: append(motivos(d.Rechazos), motivos(d.ObsCFC)...),
		}
		if s := trimXMLSpace(d.FechaCFE); s != "" {
			fd, err := cfe.ParseDate(s)
			if err != nil && r.err == nil {
				r.err = fmt.Errorf("FechaCFE %q no es una fecha", s)
			}
			v.FechaCFE = fd
		}
		if o := d.InfoOrigi; o != nil {
			v.Original = &OriginalEnvelope{IDRespuesta: r.int("IDRespSobre", o.IDRespSobre), IDEmisor: r.int("IDEmisorSobre", o.IDEmisorSobre),
				IDReceptor: r.int("IDReceptorSobre", o.IDReceptorSobre), Token: strings.Join(strings.Fields(o.IDTokenSobre), "")}
		}
		a.CFEs = append(a.CFEs, v)
	}
	if r.err != nil {
		return nil, fmt.Errorf("%w: ACKCFE: %w", ErrBadAnswer, r.err)
	}
	return a, nil
}

// ParseACKRepDiario checks and reads an ACKRepDiario as ParseACKSobre does.
func ParseACKRepDiario(doc []byte, cert *x509.Certificate) (*ACKRepDiario, error) {
	if err := ackCheck(doc, assets.SchemaACKReport, cert); err != nil {
		return nil, err
	}
	var x struct {
		Caratula caratulaXML `xml:"Caratula"`
		Detalle  struct {
			Estado         string      `xml:"Estado"`
			MotivosRechazo []motivoXML `xml:"MotivosRechazo"`
		} `xml:"Detalle"`
	}
	if err := xml.Unmarshal(doc, &x); err != nil {
		return nil, fmt.Errorf("%w: ACKRepDiario ilegible: %w", ErrBadAnswer, err)
	}
	var r fieldReader
	a := &ACKRepDiario{XML: bytes.Clone(doc), Estado: trimXMLSpace(x.Detalle.Estado), Motivos: motivos(x.Detalle.MotivosRechazo)}
	c := x.Caratula
	a.RUCReceptor, a.RUCEmisor, _, a.NomArch, a.FecHRecibido, a.IDEmisor, a.IDReceptor, a.Tmst = c.common(&r)
	if r.err != nil {
		return nil, fmt.Errorf("%w: ACKRepDiario: %w", ErrBadAnswer, r.err)
	}
	return a, nil
}

// ErrBadAnswer is the cause of refusing an answer that is not DGI's valid, signed answer (XSD,
// signature, shape). Its content must not be trusted.
var ErrBadAnswer = errors.New("DGI's answer is not a valid signed answer")

func decodeB64(s string) ([]byte, error) {
	return base64.StdEncoding.DecodeString(strings.Join(strings.Fields(s), ""))
}
