package dgi

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/beevik/etree"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// The documents of the operations besides DGI's own (EnvioCFE, Reporte and
// the ACKs): the ConsultaCFE of EFACCONSULTARESTADOENVIO (WS2013), and the
// query service's typed elements (WSCONS). DGI publishes no XSD of them: the
// shapes come from WSCONS's examples, and the element types from a client
// generated from ws_consultas's WSDL (a secondary source; the WSDL declares
// xs:all, written here in WSCONS's order). dgi/testdata/ws-dgi.xsd states
// them as a schema, for xmllint.

// ConsultaCFE writes EFACCONSULTARESTADOENVIO's document: the IdReceptor and
// Token of an ACKSobre.
func ConsultaCFE(idReceptor int64, token string) []byte {
	return []byte(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<ConsultaCFE xmlns="` + NamespaceWS + `"><IdReceptor>` +
		strconv.FormatInt(idReceptor, 10) + `</IdReceptor><Token>` + escapeString(token) + `</Token></ConsultaCFE>`)
}

// ParseConsultaCFE reads a ConsultaCFE document.
func ParseConsultaCFE(doc []byte) (idReceptor int64, token string, err error) {
	var x struct {
		XMLName    xml.Name `xml:"ConsultaCFE"`
		IdReceptor string   `xml:"IdReceptor"`
		Token      string   `xml:"Token"`
	}
	if err := xml.Unmarshal(doc, &x); err != nil {
		return 0, "", fmt.Errorf("ConsultaCFE ilegible: %w", err)
	}
	if x.XMLName.Space != NamespaceWS {
		return 0, "", fmt.Errorf("ConsultaCFE debe estar en el espacio de nombres %s", NamespaceWS)
	}
	id, err := strconv.ParseInt(trimXMLSpace(x.IdReceptor), 10, 64)
	if err != nil || id <= 0 {
		return 0, "", fmt.Errorf("IdReceptor %q no es un número positivo", x.IdReceptor)
	}
	token = strings.Join(strings.Fields(x.Token), "")
	if token == "" {
		return 0, "", fmt.Errorf("falta el Token")
	}
	return id, token, nil
}

// CFEQuery names one CFE (Cfeid: TipoCFE, Serie, Nro; all required).
type CFEQuery struct {
	RUCEmisor string // not sent: DGI reads it from the caller's certificate
	Tipo      cfe.Type
	Serie     string
	Nro       int64
}

// EnvelopeQuery asks for the envelopes received between Desde and Hasta
// (at most 31 days apart, within 2011-10-01 and 2050-12-31), optionally
// those of one IdEmisor (the issuer's envelope number) or one IdReceptor
// (DGI's); 0 means any.
type EnvelopeQuery struct {
	IdEmisor   int64
	IdReceptor int64
	Desde      time.Time
	Hasta      time.Time
}

// ReportQuery asks for the daily reports of FechaResumen, optionally of one
// Secuencia (SecEnvio) or IdEmisor; 0 means any.
type ReportQuery struct {
	FechaResumen cfe.Date
	Secuencia    int
	IdEmisor     int64
}

// CFEState is the answer of EFACCONSULTARESTADOCFE: the CFE's state and the
// query parameters of the first envelope DGI received it in.
type CFEState struct {
	Estado     string // AE, BE, CE
	IdEmisor   int64
	IdReceptor int64
	Token      string
	Fechahora  time.Time
}

// EnvelopeInfo is one envelope of EFACCONSULTARENVIOSSOBRE's answer.
type EnvelopeInfo struct {
	Estado         string // AS, BS
	FechaHoraSobre time.Time
	IdEmisor       int64
	IdReceptor     int64
	Token          string // empty for a rejected envelope
	Fechahora      time.Time
}

// ReportInfo is one report of EFACCONSULTARENVIOSREPORTE's answer.
type ReportInfo struct {
	IdEmisor           int64
	IdReceptor         int64
	Estado             string // AR, BR, and later DR, ER, FR
	FechaHoraRecepcion time.Time
}

// Limits of the period of an envelope query (WSCONS).
var (
	queryMin = time.Date(2011, time.October, 1, 0, 0, 0, 0, cfe.Montevideo)
	queryMax = time.Date(2050, time.December, 31, 23, 59, 59, 0, cfe.Montevideo)
)

// MaxQueryDays is the longest period of an envelope query (WSCONS).
const MaxQueryDays = 31

// Check returns what is wrong with the query, in Spanish, or "".
func (q EnvelopeQuery) Check() string {
	switch {
	case q.Desde.IsZero() || q.Hasta.IsZero():
		return "indique el período (desde y hasta)"
	case q.Hasta.Before(q.Desde):
		return "el período termina antes de empezar"
	case q.Hasta.Sub(q.Desde) > MaxQueryDays*24*time.Hour:
		return fmt.Sprintf("el período no puede superar %d días (DGI)", MaxQueryDays)
	case q.Desde.Before(queryMin) || q.Hasta.After(queryMax):
		return "el período debe estar entre el 2011-10-01 y el 2050-12-31 (DGI)"
	case q.IdEmisor < 0 || q.IdReceptor < 0:
		return "IdEmisor e IdReceptor no pueden ser negativos"
	}
	return ""
}

// Check returns what is wrong with the query, in Spanish, or "".
func (q CFEQuery) Check() string {
	switch {
	case !q.Tipo.Valid():
		return fmt.Sprintf("tipo de CFE %d desconocido", int(q.Tipo))
	case !validSerie(q.Serie):
		return fmt.Sprintf("serie %q inválida", q.Serie)
	case q.Nro < 1 || q.Nro > 9_999_999:
		return fmt.Sprintf("número %d inválido", q.Nro)
	}
	return ""
}

// Check returns what is wrong with the query, in Spanish, or "".
func (q ReportQuery) Check() string {
	switch {
	case q.FechaResumen.IsZero():
		return "indique la fecha del resumen"
	case q.Secuencia < 0 || q.Secuencia > 127:
		return "la secuencia debe estar entre 0 y 127"
	case q.IdEmisor < 0:
		return "IdEmisor no puede ser negativo"
	}
	return ""
}

func validSerie(s string) bool {
	switch len(s) {
	case 1:
		return s[0] >= 'A' && s[0] <= 'Z'
	case 2:
		return (s[0] >= 'A' && s[0] <= 'Z' || s[0] >= '1' && s[0] <= '9') && s[1] >= 'A' && s[1] <= 'Z'
	}
	return false
}

// element writes a simple element with prefix p.
func element(b *bytes.Buffer, p, name, value string) {
	b.WriteString("<" + p + name + ">" + escapeString(value) + "</" + p + name + ">")
}

func pfx(prefix string) string {
	if prefix == "" {
		return ""
	}
	return prefix + ":"
}

// queryContent writes the typed content of a query request element (the
// element inside WS_eFactura_Consultas.<OP>), with the service namespace's
// prefix p ("dgi:" in requests).
func (q CFEQuery) content(p string) []byte {
	var b bytes.Buffer
	b.WriteString("<" + p + "Cfeid>")
	element(&b, p, "TipoCFE", q.Tipo.String())
	element(&b, p, "Serie", q.Serie)
	element(&b, p, "Nro", strconv.FormatInt(q.Nro, 10))
	b.WriteString("</" + p + "Cfeid>")
	return b.Bytes()
}

func (q EnvelopeQuery) content(p string) []byte {
	var b bytes.Buffer
	b.WriteString("<" + p + "Consultaenviossobre>")
	element(&b, p, "IdEmisor", strconv.FormatInt(q.IdEmisor, 10))
	element(&b, p, "IdReceptor", strconv.FormatInt(q.IdReceptor, 10))
	element(&b, p, "FechaDesde", FormatFechaHora(q.Desde))
	element(&b, p, "FechaHasta", FormatFechaHora(q.Hasta))
	b.WriteString("</" + p + "Consultaenviossobre>")
	return b.Bytes()
}

func (q ReportQuery) content(p string) []byte {
	var b bytes.Buffer
	b.WriteString("<" + p + "Consultaenviosreporte>")
	element(&b, p, "FechaResumen", q.FechaResumen.String())
	if q.Secuencia != 0 {
		element(&b, p, "Secuencia", strconv.Itoa(q.Secuencia))
	}
	if q.IdEmisor != 0 {
		element(&b, p, "IdEmisor", strconv.FormatInt(q.IdEmisor, 10))
	}
	b.WriteString("</" + p + "Consultaenviosreporte>")
	return b.Bytes()
}

// fields reads the child elements of el by local name (the first of each),
// as trimmed text; all must be in the service namespace.
func fields(el *etree.Element) (map[string]string, error) {
	out := map[string]string{}
	for _, c := range el.ChildElements() {
		if c.NamespaceURI() != NamespaceWS {
			return nil, fmt.Errorf("<%s> no está en el espacio de nombres %s", c.Tag, NamespaceWS)
		}
		if _, dup := out[c.Tag]; dup {
			return nil, fmt.Errorf("<%s> repetido", c.Tag)
		}
		out[c.Tag] = trimXMLSpace(text(c))
	}
	return out, nil
}

// child returns the only child element of op named name, in the service
// namespace.
func child(op *etree.Element, name string) (*etree.Element, error) {
	var found *etree.Element
	for _, c := range op.ChildElements() {
		if c.Tag != name || c.NamespaceURI() != NamespaceWS {
			return nil, fmt.Errorf("<%s> no corresponde en <%s> (se espera %s)", c.Tag, op.Tag, name)
		}
		if found != nil {
			return nil, fmt.Errorf("<%s> repetido", name)
		}
		found = c
	}
	if found == nil {
		return nil, fmt.Errorf("falta <%s>", name)
	}
	return found, nil
}

// ReadCFEQuery reads the request element of EFACCONSULTARESTADOCFE.
func ReadCFEQuery(op *etree.Element) (CFEQuery, error) {
	el, err := child(op, "Cfeid")
	if err != nil {
		return CFEQuery{}, err
	}
	f, err := fields(el)
	if err != nil {
		return CFEQuery{}, err
	}
	var q CFEQuery
	tipo, err1 := strconv.Atoi(f["TipoCFE"])
	nro, err2 := strconv.ParseInt(f["Nro"], 10, 64)
	if err1 != nil || err2 != nil {
		return CFEQuery{}, fmt.Errorf("TipoCFE y Nro deben ser números")
	}
	q.Tipo, q.Serie, q.Nro = cfe.Type(tipo), f["Serie"], nro
	if msg := q.Check(); msg != "" {
		return CFEQuery{}, fmt.Errorf("%s", msg)
	}
	return q, nil
}

// ReadEnvelopeQuery reads the request element of EFACCONSULTARENVIOSSOBRE.
func ReadEnvelopeQuery(op *etree.Element) (EnvelopeQuery, error) {
	el, err := child(op, "Consultaenviossobre")
	if err != nil {
		return EnvelopeQuery{}, err
	}
	f, err := fields(el)
	if err != nil {
		return EnvelopeQuery{}, err
	}
	var q EnvelopeQuery
	var r fieldReader
	q.IdEmisor = r.int("IdEmisor", f["IdEmisor"])
	q.IdReceptor = r.int("IdReceptor", f["IdReceptor"])
	q.Desde = r.time("FechaDesde", f["FechaDesde"])
	q.Hasta = r.time("FechaHasta", f["FechaHasta"])
	if r.err != nil {
		return EnvelopeQuery{}, r.err
	}
	if msg := q.Check(); msg != "" {
		return EnvelopeQuery{}, fmt.Errorf("%s", msg)
	}
	return q, nil
}

// ReadReportQuery reads the request element of EFACCONSULTARENVIOSREPORTE.
func ReadReportQuery(op *etree.Element) (ReportQuery, error) {
	el, err := child(op, "Consultaenviosreporte")
	if err != nil {
		return ReportQuery{}, err
	}
	f, err := fields(el)
	if err != nil {
		return ReportQuery{}, err
	}
	var q ReportQuery
	if q.FechaResumen, err = cfe.ParseDate(f["FechaResumen"]); err != nil {
		return ReportQuery{}, fmt.Errorf("FechaResumen %q no es una fecha", f["FechaResumen"])
	}
	var r fieldReader
	q.Secuencia = int(r.int("Secuencia", f["Secuencia"]))
	q.IdEmisor = r.int("IdEmisor", f["IdEmisor"])
	if r.err != nil {
		return ReportQuery{}, r.err
	}
	if msg := q.Check(); msg != "" {
		return ReportQuery{}, fmt.Errorf("%s", msg)
	}
	return q, nil
}

// Answers of the query service, written as DGI writes them (WSCONS's
// examples: the service namespace as the default one).

func paramConsulta(b *bytes.Buffer, token string, at time.Time) {
	if token == "" {
		return
	}
	b.WriteString("<ParamConsulta>")
	element(b, "", "Token", token)
	element(b, "", "Fechahora", FormatFechaHora(at))
	b.WriteString("</ParamConsulta>")
}

// CFEStateContent writes the content of EFACCONSULTARESTADOCFE's answer: an
// Ackconsultaestadocfe, or nothing when DGI holds no such CFE (st nil).
func CFEStateContent(st *CFEState) []byte {
	if st == nil {
		return nil
	}
	var b bytes.Buffer
	b.WriteString("<Ackconsultaestadocfe>")
	element(&b, "", "EstadoCFE", st.Estado)
	element(&b, "", "IdEmisor", strconv.FormatInt(st.IdEmisor, 10))
	element(&b, "", "IdReceptor", strconv.FormatInt(st.IdReceptor, 10))
	paramConsulta(&b, st.Token, st.Fechahora)
	b.WriteString("</Ackconsultaestadocfe>")
	return b.Bytes()
}

// EnvelopesContent writes the content of EFACCONSULTARENVIOSSOBRE's answer.
func EnvelopesContent(list []EnvelopeInfo) []byte {
	var b bytes.Buffer
	b.WriteString("<Ackconsultaenviossobre><ColeccionDatosSobre>")
	for _, e := range list {
		b.WriteString("<DatosSobre>")
		element(&b, "", "EstadoSobre", e.Estado)
		element(&b, "", "FechaHoraSobre", FormatFechaHora(e.FechaHoraSobre))
		element(&b, "", "IdEmisor", strconv.FormatInt(e.IdEmisor, 10))
		element(&b, "", "IdReceptor", strconv.FormatInt(e.IdReceptor, 10))
		paramConsulta(&b, e.Token, e.Fechahora)
		b.WriteString("</DatosSobre>")
	}
	b.WriteString("</ColeccionDatosSobre></Ackconsultaenviossobre>")
	return b.Bytes()
}

// ReportsContent writes the content of EFACCONSULTARENVIOSREPORTE's answer.
func ReportsContent(list []ReportInfo) []byte {
	var b bytes.Buffer
	b.WriteString("<Ackconsultaenviosreporte><ColeccionDatosReporte>")
	for _, r := range list {
		b.WriteString("<DatosReporte>")
		element(&b, "", "IdEmisor", strconv.FormatInt(r.IdEmisor, 10))
		element(&b, "", "IdReceptor", strconv.FormatInt(r.IdReceptor, 10))
		element(&b, "", "Estado", r.Estado)
		element(&b, "", "FechaHoraRecepcion", FormatFechaHora(r.FechaHoraRecepcion))
		b.WriteString("</DatosReporte>")
	}
	b.WriteString("</ColeccionDatosReporte></Ackconsultaenviosreporte>")
	return b.Bytes()
}

// readParam reads a ParamConsulta child of el, if any.
func readParam(el *etree.Element, r *fieldReader) (string, time.Time) {
	p := sel(el, "ParamConsulta")
	if p == nil {
		return "", time.Time{}
	}
	var token, at string
	if t := sel(p, "Token"); t != nil {
		token = strings.Join(strings.Fields(text(t)), "")
	}
	if f := sel(p, "Fechahora"); f != nil {
		at = text(f)
	}
	return token, r.time("Fechahora", at)
}

func childText(el *etree.Element, name string) string {
	if c := sel(el, name); c != nil {
		return trimXMLSpace(text(c))
	}
	return ""
}

// readCFEState reads EFACCONSULTARESTADOCFE's answer element: nil, nil when
// it holds no Ackconsultaestadocfe (DGI holds no such CFE).
func readCFEState(resp *etree.Element) (*CFEState, error) {
	a := sel(resp, "Ackconsultaestadocfe")
	if a == nil || len(a.ChildElements()) == 0 {
		return nil, nil
	}
	var r fieldReader
	st := &CFEState{Estado: childText(a, "EstadoCFE"), IdEmisor: r.int("IdEmisor", childText(a, "IdEmisor")),
		IdReceptor: r.int("IdReceptor", childText(a, "IdReceptor"))}
	st.Token, st.Fechahora = readParam(a, &r)
	if r.err != nil {
		return nil, r.err
	}
	if st.Estado == "" {
		return nil, fmt.Errorf("Ackconsultaestadocfe sin EstadoCFE")
	}
	return st, nil
}

func readEnvelopes(resp *etree.Element) ([]EnvelopeInfo, error) {
	a := sel(resp, "Ackconsultaenviossobre")
	if a == nil {
		return nil, fmt.Errorf("falta Ackconsultaenviossobre")
	}
	var out []EnvelopeInfo
	var r fieldReader
	if col := sel(a, "ColeccionDatosSobre"); col != nil {
		for _, d := range sels(col, "DatosSobre") {
			e := EnvelopeInfo{Estado: childText(d, "EstadoSobre"), FechaHoraSobre: r.time("FechaHoraSobre", childText(d, "FechaHoraSobre")),
				IdEmisor: r.int("IdEmisor", childText(d, "IdEmisor")), IdReceptor: r.int("IdReceptor", childText(d, "IdReceptor"))}
			e.Token, e.Fechahora = readParam(d, &r)
			out = append(out, e)
		}
	}
	return out, r.err
}

func readReports(resp *etree.Element) ([]ReportInfo, error) {
	a := sel(resp, "Ackconsultaenviosreporte")
	if a == nil {
		return nil, fmt.Errorf("falta Ackconsultaenviosreporte")
	}
	var out []ReportInfo
	var r fieldReader
	if col := sel(a, "ColeccionDatosReporte"); col != nil {
		for _, d := range sels(col, "DatosReporte") {
			out = append(out, ReportInfo{IdEmisor: r.int("IdEmisor", childText(d, "IdEmisor")), IdReceptor: r.int("IdReceptor", childText(d, "IdReceptor")),
				Estado: childText(d, "Estado"), FechaHoraRecepcion: r.time("FechaHoraRecepcion", childText(d, "FechaHoraRecepcion"))})
		}
	}
	return out, r.err
}

// sel returns el's first child element named name in the service
// namespace, whatever its prefix.
func sel(el *etree.Element, name string) *etree.Element {
	return childNS(el, NamespaceWS, name)
}

func sels(el *etree.Element, name string) []*etree.Element {
	return childrenNS(el, NamespaceWS, name)
}
