package signer

import (
	"crypto/x509"
	"fmt"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// Envelope is a DGI envelope of CFEs (EnvioCFE or EnvioCFE_entreEmpresas,
// "sobre") as ReadEnvelope reads it: the certificate its Caratula carries,
// which signed its CFEs, and each CFE as the standalone document that was
// signed.
type Envelope struct {
	Kind        cfe.EnvelopeKind
	Certificate *x509.Certificate // the Caratula's X509Certificate
	RUCEmisor   string            // the Caratula's
	RutReceptor string            // the Caratula's: DGI's RUC or the receiving company's
	IdEmisor    int64
	Fecha       time.Time
	CFEs        [][]byte // each CFE cut out of the envelope byte for byte (UTF-8)
	Adendas     []string // the receiver's envelope's Adenda of each CFE ("" when none)
}

// ReadEnvelope splits an envelope into its Caratula and its CFEs. DGI signs
// each CFE as a document of its own before putting it in the envelope (the
// CFE declares its namespace itself), so each is cut out byte for byte, ready
// for Verify; an envelope in ISO-8859-1 (DGI's example) is decoded first.
// Signatures are not checked here: verify each CFE with the Certificate.
//
// Errors: EINVALID when the bytes are not an envelope of either layout
// (cfe.ParseEnvelope's rules) or its Caratula's certificate cannot be read.
func ReadEnvelope(b []byte) (*Envelope, error) {
	const op = "signer.ReadEnvelope"
	e, err := cfe.ParseEnvelope(b)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(e.Caratula.Certificate)
	if err != nil {
		return nil, invalid(op, "el certificado de la Caratula no se puede leer", err)
	}
	out := &Envelope{Kind: e.Kind, Certificate: cert, RUCEmisor: e.Caratula.RUCEmisor, RutReceptor: e.Caratula.RutReceptor,
		IdEmisor: e.Caratula.IdEmisor, Fecha: e.Caratula.Fecha}
	for _, c := range e.CFEs {
		out.CFEs = append(out.CFEs, c.XML)
		out.Adendas = append(out.Adendas, c.Adenda)
	}
	return out, nil
}

// EnvelopeRequest is what MakeEnvelope needs besides the CFEs.
type EnvelopeRequest struct {
	Kind        cfe.EnvelopeKind
	RutReceptor string // cfe.RUCDGI, or the receiving company's RUC
	IdEmisor    int64
	Fecha       time.Time
	CFEs        []cfe.EnvelopeCFE // each CFE byte-exact as stored, with its Adenda for the receiver
}

// MakeEnvelope writes a DGI envelope of signed CFEs: PrepareEnvelope, then
// cfe.BuildEnvelope. Errors: EINVALID as those two.
func MakeEnvelope(r EnvelopeRequest) ([]byte, error) {
	e, err := PrepareEnvelope(r)
	if err != nil {
		return nil, err
	}
	return cfe.BuildEnvelope(e)
}

// PrepareEnvelope checks the signed CFEs of an envelope and fills its
// Caratula. It verifies every CFE's signature with the certificate its
// KeyInfo carries and requires one certificate for all of them (DGI: "Todos
// los CFE incluidos en el sobre deben ser firmados con el mismo certificado
// electrónico"); that certificate goes into the Caratula, and RUCEmisor is
// the CFEs' issuer. The envelope itself carries no signature: DGI's format
// has none (see cfe.Envelope). A caller that numbers its envelopes may set
// Caratula.IdEmisor afterwards, then call cfe.BuildEnvelope, which applies
// the format's remaining rules.
//
// Errors: EINVALID naming the CFE whose signature does not verify or the
// CFEs signed with another certificate.
func PrepareEnvelope(r EnvelopeRequest) (*cfe.Envelope, error) {
	const op = "signer.PrepareEnvelope"
	var cert *x509.Certificate
	var fields []cfe.FieldError
	ruc := ""
	for i, c := range r.CFEs {
		campo := fmt.Sprintf("CFE[%d]", i+1)
		name := campo
		if h, err := cfe.ReadCFEHead(c.XML); err == nil {
			name = h.String()
			if ruc == "" {
				ruc = h.RUCEmisor
			}
		}
		v, err := Verify(c.XML, VerifyOptions{})
		switch {
		case err != nil:
			fields = append(fields, cfe.FieldError{Campo: campo, Mensaje: fmt.Sprintf("%s: firma inválida: %s", name, cfe.ErrorMessage(err))})
		case cert == nil:
			cert = v.Certificate
		case !cert.Equal(v.Certificate):
			fields = append(fields, cfe.FieldError{Campo: campo, Mensaje: fmt.Sprintf(
				"%s está firmado con el certificado %q (serie %s) y los anteriores con %q (serie %s): DGI admite un solo certificado por sobre",
				name, v.Certificate.Subject.CommonName, v.Certificate.SerialNumber, cert.Subject.CommonName, cert.SerialNumber)})
		}
	}
	if len(fields) > 0 {
		msg := "no se puede armar el sobre"
		if len(fields) == 1 {
			msg = fields[0].Campo + ": " + fields[0].Mensaje
		}
		return nil, &cfe.Error{Code: cfe.EINVALID, Op: op, Message: msg, Fields: fields}
	}
	car := cfe.Caratula{RutReceptor: r.RutReceptor, RUCEmisor: ruc, IdEmisor: r.IdEmisor, Fecha: r.Fecha}
	if cert != nil {
		car.Certificate = cert.Raw
	}
	return &cfe.Envelope{Kind: r.Kind, Caratula: car, CFEs: r.CFEs}, nil
}
