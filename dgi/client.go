package dgi

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/beevik/etree"
	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/signer"
)

// Causes of the client's errors, for errors.Is. Every error is a
// *cfe.Error whose Message is Spanish.
var (
	// ErrOutcomeUnknown: a sending operation (an envelope, a report) may
	// have reached DGI, but no trustworthy answer came back (a timeout, a
	// connection dropped after it was open, an answer that does not
	// verify). DGI may hold what was sent: ask (CFEState, Envelopes) before
	// sending it again. Code EUNAVAILABLE.
	ErrOutcomeUnknown = errors.New("the request may have reached DGI: outcome unknown")
	// ErrNotSent: no connection to DGI was made; nothing was sent, and
	// sending again is safe. Code EUNAVAILABLE.
	ErrNotSent = errors.New("no connection to DGI: nothing was sent")
	// ErrFault: DGI answered with a SOAP Fault (a refusal of the call).
	ErrFault = errors.New("DGI answered a SOAP fault")
	// ErrNotProcessed: DGI has not processed the envelope yet (exceptions
	// 13, 99 and 105): ask again later. Code EUNAVAILABLE.
	ErrNotProcessed = errors.New("DGI has not processed it yet")
	// ErrDGICertificate: the pinned certificate of DGI is expired or not
	// yet valid.
	ErrDGICertificate = errors.New("DGI's certificate is outside its validity")
)

// errRefused: an HTTP refusal (4xx) without a SOAP answer: the request did
// not reach the service.
var errRefused = errors.New("the HTTP server refused the request")

// OutcomeUnknown reports whether err says that DGI may hold what was sent
// (ErrOutcomeUnknown): the caller must ask before sending it again.
func OutcomeUnknown(err error) bool { return errors.Is(err, ErrOutcomeUnknown) }

// Config configures a Client.
type Config struct {
	// Environment selects DGI's URLs and shipped certificate when those are
	// not set; empty means Test.
	Environment Environment
	// ReceptionURL and QueryURL are DGI's reception (ws_efactura) and query
	// (ws_consultas) services. https is required; http is allowed only for
	// a loopback host (tests, the emulator).
	ReceptionURL string
	QueryURL     string
	// Credentials are the company's key and certificate (signer.LoadPKCS12):
	// they sign every request (WS-Security) and, with ClientTLS, identify
	// the company in TLS.
	Credentials *signer.Credentials
	// DGICertificate is the certificate DGI signs its answers with: every
	// answer's WS-Security and every ACK's own signature must be its. Nil
	// means the one shipped for Environment (certs/SOURCE.md); an expired
	// one is refused.
	DGICertificate *x509.Certificate
	// ClientTLS presents Credentials as the TLS client certificate, where
	// DGI's endpoint asks for one.
	ClientTLS bool
	// RootCAs verifies DGI's TLS server certificate; nil means the system's.
	RootCAs *x509.CertPool
	// Timeout bounds each call, from connecting to reading the answer; 0
	// means DefaultTimeout. ConnectTimeout bounds the connection alone; 0
	// means DefaultConnectTimeout.
	Timeout        time.Duration
	ConnectTimeout time.Duration
	// Now is the clock the certificates' validity is read with; nil means
	// time.Now.
	Now func() time.Time
}

// Defaults of Config.
const (
	DefaultTimeout        = 60 * time.Second
	DefaultConnectTimeout = 15 * time.Second
	// maxAnswerBytes bounds an answer read from DGI.
	maxAnswerBytes = 4 << 20
)

// Client speaks to DGI's web services. It is safe for concurrent use.
type Client struct {
	reception, query string
	creds            *signer.Credentials
	dgiCert          *x509.Certificate
	http             *http.Client
	now              func() time.Time
}

// New returns a Client for cfg. Errors: EINVALID for a missing credential,
// a URL that is not https (or http to a loopback host), an unknown
// environment, or DGI's certificate outside its validity now.
func New(cfg Config) (*Client, error) {
	const op = "dgi.New"
	env := cfg.Environment
	if env == "" {
		env = Test
	}
	if env != Test && env != Production {
		return nil, invalid(op, fmt.Sprintf("entorno de DGI %q desconocido: use %q o %q", env, Test, Production))
	}
	if cfg.Credentials == nil || cfg.Credentials.Key == nil || cfg.Credentials.Certificate == nil {
		return nil, invalid(op, "falta el certificado de la empresa para firmar los mensajes a DGI")
	}
	reception, query := cfg.ReceptionURL, cfg.QueryURL
	if reception == "" {
		reception = map[Environment]string{Test: TestReceptionURL, Production: ProductionReceptionURL}[env]
	}
	if query == "" {
		query = map[Environment]string{Test: TestQueryURL, Production: ProductionQueryURL}[env]
	}
	for _, u := range []struct{ name, url string }{{"url_recepcion", reception}, {"url_consultas", query}} {
		if msg := CheckURL(u.url); msg != "" {
			return nil, invalid(op, u.name+": "+msg)
		}
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	dgiCert := cfg.DGICertificate
	if dgiCert == nil {
		var err error
		if dgiCert, err = ShippedCertificate(env); err != nil {
			return nil, invalid(op, err.Error())
		}
	}
	if msg := certValidity(dgiCert, now()); msg != "" {
		return nil, &cfe.Error{Code: cfe.EINVALID, Op: op, Message: msg, Err: ErrDGICertificate}
	}
	timeout, connect := cfg.Timeout, cfg.ConnectTimeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	if connect <= 0 {
		connect = DefaultConnectTimeout
	}
	tlsConf := &tls.Config{RootCAs: cfg.RootCAs, MinVersion: tls.VersionTLS12}
	if cfg.ClientTLS {
		tlsConf.Certificates = []tls.Certificate{{
			Certificate: append([][]byte{cfg.Credentials.Certificate.Raw}, rawChain(cfg.Credentials.Chain)...),
			PrivateKey:  cfg.Credentials.Key,
			Leaf:        cfg.Credentials.Certificate,
		}}
	}
	transport := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: connect, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig:       tlsConf,
		TLSHandshakeTimeout:   connect,
		MaxIdleConnsPerHost:   2,
		IdleConnTimeout:       60 * time.Second,
		ResponseHeaderTimeout: timeout,
		ForceAttemptHTTP2:     false,
	}
	return &Client{
		reception: reception, query: query, creds: cfg.Credentials, dgiCert: dgiCert, now: now,
		http: &http.Client{Transport: transport, Timeout: timeout,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
	}, nil
}

func rawChain(chain []*x509.Certificate) [][]byte {
	out := make([][]byte, 0, len(chain))
	for _, c := range chain {
		out = append(out, c.Raw)
	}
	return out
}

// CheckURL says, in Spanish, why u cannot be one of DGI's endpoints: it
// must be https, or http to a loopback host (127.0.0.0/8, ::1, localhost).
// It returns "" when u is acceptable.
func CheckURL(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.Host == "" {
		return fmt.Sprintf("%q no es una URL", u)
	}
	switch p.Scheme {
	case "https":
		return ""
	case "http":
		host := p.Hostname()
		if host == "localhost" {
			return ""
		}
		if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
			return ""
		}
		return fmt.Sprintf("%q usa http sin cifrar: DGI se contacta por https (http solo se admite hacia esta misma máquina, para pruebas)", u)
	}
	return fmt.Sprintf("%q debe ser una URL https", u)
}

// DGICertificate returns the pinned certificate of DGI.
func (c *Client) DGICertificate() *x509.Certificate { return c.dgiCert }

// Close releases idle connections.
func (c *Client) Close() { c.http.CloseIdleConnections() }

func invalid(op, msg string) *cfe.Error { return &cfe.Error{Code: cfe.EINVALID, Op: op, Message: msg} }

// sends reports whether op hands DGI something it keeps (an envelope, a
// report): the outcome of such a call can be unknown.
func sends(op Operation) bool { return op == OpSendEnvelope || op == OpSendReport }

// failure builds the client's error for op.
func failure(op Operation, code, msg string, causes ...error) error {
	if sends(op) && code == cfe.EUNAVAILABLE && !containsErr(causes, ErrNotSent) && !containsErr(causes, ErrNotProcessed) &&
		!containsErr(causes, errRefused) {
		causes = append([]error{ErrOutcomeUnknown}, causes...)
		msg += ". DGI pudo haberlo recibido: consulte antes de volver a enviarlo"
	}
	return &cfe.Error{Code: code, Op: "dgi." + string(op), Message: msg, Err: errors.Join(causes...)}
}

func containsErr(list []error, target error) bool {
	for _, e := range list {
		if errors.Is(e, target) {
			return true
		}
	}
	return false
}

// post sends request to endpoint. A request that did not leave whole (the
// connection failed before the request was written: refused, or a pooled
// connection the server had closed) cannot have reached DGI: it is retried
// once on a reused connection, else reported ErrNotSent. A failure after it
// was written is an unknown outcome for a sending operation.
func (c *Client) post(ctx context.Context, op Operation, endpoint string, request []byte) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		var reused, wrote bool
		trace := &httptrace.ClientTrace{
			GotConn:      func(i httptrace.GotConnInfo) { reused = i.Reused },
			WroteRequest: func(i httptrace.WroteRequestInfo) { wrote = i.Err == nil },
		}
		req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), http.MethodPost, endpoint, bytes.NewReader(request))
		if err != nil {
			return nil, failure(op, cfe.EINVALID, "no se pudo preparar el pedido a DGI", err)
		}
		req.Header.Set("Content-Type", "text/xml;charset=UTF-8")
		req.Header.Set("SOAPAction", `"`+op.SOAPAction()+`"`)
		res, err := c.http.Do(req)
		switch {
		case err == nil:
			return res, nil
		case wrote:
			return nil, failure(op, cfe.EUNAVAILABLE, "se perdió la comunicación con DGI sin recibir respuesta", err)
		case reused && attempt == 0 && ctx.Err() == nil:
			continue // a pooled connection the server had closed: nothing left
		}
		return nil, failure(op, cfe.EUNAVAILABLE, "no se pudo conectar con DGI ("+endpoint+"); no se envió nada", ErrNotSent, err)
	}
}

// call sends a signed request of op and returns the verified answer's
// element. A SOAP Fault or DGI's exception document comes back as an error.
func (c *Client) call(ctx context.Context, op Operation, request []byte) (*Message, error) {
	if msg := certValidity(c.dgiCert, c.now()); msg != "" {
		return nil, &cfe.Error{Code: cfe.EUNAVAILABLE, Op: "dgi." + string(op), Message: msg, Err: ErrDGICertificate}
	}
	endpoint := c.reception
	if op.Query() {
		endpoint = c.query
	}
	res, err := c.post(ctx, op, endpoint, request)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, maxAnswerBytes+1))
	if err != nil {
		return nil, failure(op, cfe.EUNAVAILABLE, "se cortó la respuesta de DGI", err)
	}
	if len(body) > maxAnswerBytes {
		return nil, failure(op, cfe.EUNAVAILABLE, "la respuesta de DGI es demasiado grande", ErrBadAnswer)
	}
	isXML := res.StatusCode == http.StatusOK || res.StatusCode == http.StatusInternalServerError
	if !isXML {
		if res.StatusCode >= 400 && res.StatusCode < 500 {
			return nil, failure(op, cfe.EUNAVAILABLE, fmt.Sprintf("DGI rechazó el pedido con HTTP %d", res.StatusCode), errRefused)
		}
		return nil, failure(op, cfe.EUNAVAILABLE, fmt.Sprintf("DGI respondió HTTP %d", res.StatusCode), ErrBadAnswer)
	}
	m, err := ReadMessage(body, ReadOptions{})
	if err != nil {
		return nil, failure(op, cfe.EUNAVAILABLE, "la respuesta de DGI no se puede leer: "+err.Error(), ErrBadAnswer, err)
	}
	if m.Fault != nil {
		return nil, c.fault(op, m)
	}
	if !m.Signed || !m.Certificate.Equal(c.dgiCert) {
		_, err := ReadMessage(body, ReadOptions{Certificate: c.dgiCert})
		return nil, failure(op, cfe.EUNAVAILABLE, "la respuesta de DGI no está firmada por el certificado de DGI: "+errMessage(err), ErrBadAnswer, err)
	}
	if m.Name != op.ResponseElement() || m.Space != NamespaceWS {
		return nil, failure(op, cfe.EUNAVAILABLE, fmt.Sprintf("DGI respondió <%s> a %s", m.Name, op), ErrBadAnswer)
	}
	return m, nil
}

func errMessage(err error) string {
	if err == nil {
		return "firmada por otro certificado"
	}
	return err.Error()
}

// fault turns a SOAP Fault into the client's error. An unsigned fault, or
// one not signed by DGI, is reported, but for a sending operation its
// outcome is unknown: nothing proves it came from DGI.
func (c *Client) fault(op Operation, m *Message) error {
	f := m.Fault
	trusted := m.Signed && m.Certificate.Equal(c.dgiCert)
	if f.Detail != nil {
		err := serviceFailure(op, f.Detail)
		if !trusted && sends(op) {
			return failure(op, cfe.EUNAVAILABLE, cfe.ErrorMessage(err)+" (respuesta sin la firma de DGI)", ErrFault, ErrBadAnswer, f.Detail)
		}
		return err
	}
	msg := "DGI rechazó el pedido: " + f.String
	if !trusted {
		msg += " (respuesta sin la firma de DGI)"
		if sends(op) {
			return failure(op, cfe.EUNAVAILABLE, msg, ErrFault, ErrBadAnswer)
		}
	}
	code := cfe.EINVALID
	if strings.HasSuffix(f.Code, "Server") {
		code = cfe.EUNAVAILABLE
	}
	if strings.Contains(strings.ToLower(f.String), "signature") || strings.Contains(strings.ToLower(f.String), "firma") {
		code = cfe.EUNAUTHORIZED
	}
	return &cfe.Error{Code: code, Op: "dgi." + string(op), Message: msg, Err: ErrFault}
}

// serviceFailure maps DGI's exception codes to the client's errors.
func serviceFailure(op Operation, e *ServiceError) error {
	msg := e.Error()
	switch e.Codigo {
	case ExcNotProcessed, ExcNotAvailable, ExcEnvelopePending:
		return &cfe.Error{Code: cfe.EUNAVAILABLE, Op: "dgi." + string(op), Message: msg + ": consulte más tarde", Err: errors.Join(ErrNotProcessed, ErrFault, e)}
	case ExcNoSuchEnvelope:
		return &cfe.Error{Code: cfe.ENOTFOUND, Op: "dgi." + string(op), Message: msg, Err: errors.Join(ErrFault, e)}
	case ExcCertificate, ExcSecurity, 6, 7, 8, 9, 10, 12:
		return &cfe.Error{Code: cfe.EUNAUTHORIZED, Op: "dgi." + string(op), Message: msg, Err: errors.Join(ErrFault, e)}
	case ExcMalformed, 2, ExcTokenOtherID, ExcTokenOtherRUC, 11, 111:
		return &cfe.Error{Code: cfe.EINVALID, Op: "dgi." + string(op), Message: msg, Err: errors.Join(ErrFault, e)}
	}
	return &cfe.Error{Code: cfe.EUNAVAILABLE, Op: "dgi." + string(op), Message: msg, Err: errors.Join(ErrFault, e)}
}

// document returns the document of a reception-service answer, or the
// error of DGI's exception document when that is what it carries.
func document(op Operation, m *Message) ([]byte, error) {
	doc, err := XMLData(m.Element, "Dataout")
	if err != nil {
		return nil, failure(op, cfe.EUNAVAILABLE, "la respuesta de DGI no trae Dataout/xmlData: "+err.Error(), ErrBadAnswer)
	}
	if se := sniffServiceError(doc); se != nil {
		return nil, serviceFailure(op, se)
	}
	return doc, nil
}

// sniffServiceError reads doc as DGI's exception document, nil when it is
// not one.
func sniffServiceError(doc []byte) *ServiceError {
	var x struct {
		XMLName   xml.Name
		Respuesta struct {
			Codigo      string `xml:"codigo"`
			Descripcion string `xml:"descripcion"`
			Detalle     string `xml:"detalle"`
		} `xml:"Respuesta"`
	}
	if err := xml.Unmarshal(doc, &x); err != nil || x.XMLName.Local != "Respuestas" || x.XMLName.Space != "" {
		return nil
	}
	n, err := strconv.Atoi(trimXMLSpace(x.Respuesta.Codigo))
	if err != nil {
		return nil
	}
	return &ServiceError{Codigo: n, Descripcion: trimXMLSpace(x.Respuesta.Descripcion), Detalle: trimXMLSpace(x.Respuesta.Detalle)}
}

// caratula reads the Caratula fields an envelope's answer is matched with.
func caratula(envelope []byte) (ruc string, idEmisor int64, ok bool) {
	var x struct {
		XMLName  xml.Name
		Caratula struct {
			RUCEmisor string `xml:"RUCEmisor"`
			Idemisor  string `xml:"Idemisor"`
		} `xml:"Caratula"`
	}
	d := xml.NewDecoder(bytes.NewReader(envelope))
	if err := d.Decode(&x); err != nil || x.XMLName.Local != cfe.EnvelopeDGI.Root() || x.XMLName.Space != cfe.NamespaceCFE {
		return "", 0, false
	}
	id, err := strconv.ParseInt(trimXMLSpace(x.Caratula.Idemisor), 10, 64)
	return trimXMLSpace(x.Caratula.RUCEmisor), id, err == nil
}

// SendEnvelope sends an envelope (EnvioCFE, as cfe.BuildEnvelope writes it)
// to DGI (EFACRECEPCIONSOBRE) and returns DGI's ACKSobre: AS with IDReceptor,
// Token and Fechahora, or BS with its reasons (S08: DGI already has it).
//
// Errors: EINVALID before anything is sent (not an EnvioCFE in UTF-8, over
// cfe.MaxEnvelopeBytes); EUNAVAILABLE with ErrNotSent (nothing reached DGI)
// or with ErrOutcomeUnknown (DGI may hold it: ask before sending it again);
// a refusal of the call (ErrFault) with the code of DGI's reason.
func (c *Client) SendEnvelope(ctx context.Context, envelope []byte) (*ACKSobre, error) {
	const op = OpSendEnvelope
	if len(envelope) > cfe.MaxEnvelopeBytes {
		return nil, failure(op, cfe.EINVALID, fmt.Sprintf("el sobre ocupa %d bytes y DGI admite hasta %d", len(envelope), cfe.MaxEnvelopeBytes))
	}
	ruc, idEmisor, ok := caratula(envelope)
	if !ok {
		return nil, failure(op, cfe.EINVALID, "el documento no es un sobre EnvioCFE con Carátula legible")
	}
	req, err := SignRequest(op, c.creds, envelope)
	if err != nil {
		return nil, failure(op, cfe.EINVALID, "no se pudo preparar el sobre: "+err.Error(), err)
	}
	m, err := c.call(ctx, op, req)
	if err != nil {
		return nil, err
	}
	doc, err := document(op, m)
	if err != nil {
		return nil, err
	}
	ack, err := ParseACKSobre(doc, c.dgiCert)
	if err != nil {
		return nil, failure(op, cfe.EUNAVAILABLE, err.Error(), ErrBadAnswer, err)
	}
	if ack.RUCEmisor != ruc || ack.IDEmisor != idEmisor {
		return nil, failure(op, cfe.EUNAVAILABLE, fmt.Sprintf("DGI respondió por el sobre %d del RUC %s y se envió el %d del RUC %s",
			ack.IDEmisor, ack.RUCEmisor, idEmisor, ruc), ErrBadAnswer)
	}
	return ack, nil
}

// EnvelopeStatus asks DGI for its verdict on the CFEs of an envelope
// (EFACCONSULTARESTADOENVIO) with the IDReceptor and Token of its ACKSobre,
// once Fechahora has passed. Errors: EUNAVAILABLE with ErrNotProcessed
// before DGI has processed it; ENOTFOUND for an unknown IDReceptor; the
// others of call.
func (c *Client) EnvelopeStatus(ctx context.Context, idReceptor int64, token string) (*ACKCFE, error) {
	const op = OpEnvelopeStatus
	if idReceptor <= 0 || token == "" {
		return nil, failure(op, cfe.EINVALID, "faltan el IDReceptor y el Token del sobre")
	}
	req, err := SignRequest(op, c.creds, ConsultaCFE(idReceptor, token))
	if err != nil {
		return nil, failure(op, cfe.EINVALID, err.Error(), err)
	}
	m, err := c.call(ctx, op, req)
	if err != nil {
		return nil, err
	}
	doc, err := document(op, m)
	if err != nil {
		return nil, err
	}
	ack, err := ParseACKCFE(doc, c.dgiCert)
	if err != nil {
		return nil, failure(op, cfe.EUNAVAILABLE, err.Error(), ErrBadAnswer, err)
	}
	if ack.IDReceptor != idReceptor {
		return nil, failure(op, cfe.EUNAVAILABLE, fmt.Sprintf("DGI respondió por el sobre %d y se preguntó por el %d", ack.IDReceptor, idReceptor), ErrBadAnswer)
	}
	return ack, nil
}

// SendReport sends a signed daily report (Reporte) to DGI
// (EFACRECEPCIONREPORTE) and returns its ACKRepDiario. Errors as
// SendEnvelope's.
func (c *Client) SendReport(ctx context.Context, report []byte) (*ACKRepDiario, error) {
	const op = OpSendReport
	req, err := SignRequest(op, c.creds, report)
	if err != nil {
		return nil, failure(op, cfe.EINVALID, "no se pudo preparar el reporte: "+err.Error(), err)
	}
	m, err := c.call(ctx, op, req)
	if err != nil {
		return nil, err
	}
	doc, err := document(op, m)
	if err != nil {
		return nil, err
	}
	ack, err := ParseACKRepDiario(doc, c.dgiCert)
	if err != nil {
		return nil, failure(op, cfe.EUNAVAILABLE, err.Error(), ErrBadAnswer, err)
	}
	return ack, nil
}

// CFEState asks DGI for one CFE (EFACCONSULTARESTADOCFE): its state and the
// envelope DGI first received it in. Errors: ENOTFOUND when DGI holds no
// such CFE of the company; EUNAVAILABLE with ErrNotProcessed when DGI has
// it in an envelope not yet processed; EINVALID for a malformed query.
func (c *Client) CFEState(ctx context.Context, q CFEQuery) (*CFEState, error) {
	st, err := ask(ctx, c, OpCFEStatus, q, readCFEState)
	if err == nil && st == nil {
		return nil, &cfe.Error{Code: cfe.ENOTFOUND, Op: "dgi." + string(OpCFEStatus), Message: fmt.Sprintf("DGI no tiene el CFE %d %s-%d", int(q.Tipo), q.Serie, q.Nro)}
	}
	return st, err
}

// Envelopes lists the envelopes DGI received from the company in a period
// (EFACCONSULTARENVIOSSOBRE). Errors: EINVALID for a period DGI refuses;
// the others of call.
func (c *Client) Envelopes(ctx context.Context, q EnvelopeQuery) ([]EnvelopeInfo, error) {
	return ask(ctx, c, OpEnvelopes, q, readEnvelopes)
}

// Reports lists the company's daily reports of a date
// (EFACCONSULTARENVIOSREPORTE).
func (c *Client) Reports(ctx context.Context, q ReportQuery) ([]ReportInfo, error) {
	return ask(ctx, c, OpReports, q, readReports)
}

// query is a query service's request: checked, then written as its body.
type query interface {
	queryContent
	Check() string
}

// ask is the path every query takes: q checked (EINVALID), sent signed, and
// its answer read by read (EUNAVAILABLE with ErrBadAnswer when it cannot be).
func ask[T any](ctx context.Context, c *Client, op Operation, q query, read func(*etree.Element) (T, error)) (T, error) {
	var none T
	if msg := q.Check(); msg != "" {
		return none, failure(op, cfe.EINVALID, msg)
	}
	m, err := c.signedQuery(ctx, op, q)
	if err != nil {
		return none, err
	}
	v, err := read(m.Element)
	if err != nil {
		return none, failure(op, cfe.EUNAVAILABLE, "la respuesta de DGI no se puede leer: "+err.Error(), ErrBadAnswer)
	}
	return v, nil
}

func (c *Client) signedQuery(ctx context.Context, op Operation, q queryContent) (*Message, error) {
	req, err := signQuery(op, c.creds, q)
	if err != nil {
		return nil, failure(op, cfe.EINVALID, err.Error(), err)
	}
	return c.call(ctx, op, req)
}
