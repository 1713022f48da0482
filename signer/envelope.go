package signer

import (
	"crypto/sha256"
	"crypto/x509"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
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
	// Verified, when set, remembers the CFEs whose signature verified, so
	// that a CFE that goes into another envelope (a smaller one, one sent
	// again, a refused envelope's CFEs in a new one) is not verified again.
	// nil: every CFE is verified.
	Verified *VerifiedCFEs
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
// KeyInfo carries (Verify: the whole CFE parsed and canonicalized; the CFEs
// are verified side by side, one per processor) and requires one
// certificate for all of them (DGI: "Todos los CFE incluidos en el sobre
// deben ser firmados con el mismo certificado electrónico"); that
// certificate goes into the Caratula, and RUCEmisor is the CFEs' issuer.
// The envelope itself carries no signature: DGI's format has none (see
// cfe.Envelope). A caller that numbers its envelopes may set
// Caratula.IdEmisor afterwards, then call cfe.BuildEnvelope, which applies
// the format's remaining rules.
//
// Errors: EINVALID naming the CFE whose signature does not verify or the
// CFEs signed with another certificate.
func PrepareEnvelope(r EnvelopeRequest) (*cfe.Envelope, error) {
	const op = "signer.PrepareEnvelope"
	certs, errs := verifyAll(r.CFEs, r.Verified)
	name := func(i int) string {
		if h, err := cfe.ReadCFEHead(r.CFEs[i].XML); err == nil {
			return h.String()
		}
		return fmt.Sprintf("CFE[%d]", i+1)
	}
	var cert *x509.Certificate
	var fields []cfe.FieldError
	for i := range r.CFEs {
		campo := fmt.Sprintf("CFE[%d]", i+1)
		switch {
		case errs[i] != nil:
			fields = append(fields, cfe.FieldError{Campo: campo, Mensaje: fmt.Sprintf("%s: firma inválida: %s", name(i), cfe.ErrorMessage(errs[i]))})
		case cert == nil:
			cert = certs[i]
		case !cert.Equal(certs[i]):
			fields = append(fields, cfe.FieldError{Campo: campo, Mensaje: fmt.Sprintf(
				"%s está firmado con el certificado %q (serie %s) y los anteriores con %q (serie %s): DGI admite un solo certificado por sobre",
				name(i), certs[i].Subject.CommonName, certs[i].SerialNumber, cert.Subject.CommonName, cert.SerialNumber)})
		}
	}
	if len(fields) > 0 {
		msg := "no se puede armar el sobre"
		if len(fields) == 1 {
			msg = fields[0].Campo + ": " + fields[0].Mensaje
		}
		return nil, &cfe.Error{Code: cfe.EINVALID, Op: op, Message: msg, Fields: fields}
	}
	// The issuer is the first CFE's (BuildEnvelope requires every CFE's to
	// be the same).
	ruc := ""
	for _, c := range r.CFEs {
		if h, err := cfe.ReadCFEHead(c.XML); err == nil {
			ruc = h.RUCEmisor
			break
		}
	}
	car := cfe.Caratula{RutReceptor: r.RutReceptor, RUCEmisor: ruc, IdEmisor: r.IdEmisor, Fecha: r.Fecha}
	if cert != nil {
		car.Certificate = cert.Raw
	}
	return &cfe.Envelope{Kind: r.Kind, Caratula: car, CFEs: r.CFEs}, nil
}

// verifyAll verifies the signature of each CFE (Verify), on as many
// goroutines as there are processors, and returns the certificate that
// signed each, or why it does not verify. A CFE that cache holds is not
// verified again; one that verifies is added to it.
func verifyAll(cfes []cfe.EnvelopeCFE, cache *VerifiedCFEs) ([]*x509.Certificate, []error) {
	certs := make([]*x509.Certificate, len(cfes))
	errs := make([]error, len(cfes))
	var next atomic.Int64
	work := func() {
		for {
			i := int(next.Add(1) - 1)
			if i >= len(cfes) {
				return
			}
			x := cfes[i].XML
			var key [sha256.Size]byte
			if cache != nil {
				key = sha256.Sum256(x)
				if certs[i] = cache.lookup(key); certs[i] != nil {
					continue
				}
			}
			v, err := Verify(x, VerifyOptions{})
			if err != nil {
				errs[i] = err
				continue
			}
			certs[i] = v.Certificate
			if cache != nil {
				cache.add(key, v.Certificate)
			}
		}
	}
	workers := min(runtime.GOMAXPROCS(0), len(cfes))
	var wg sync.WaitGroup
	for range workers - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
	return certs, errs
}

// VerifiedCFEs remembers signed CFEs whose signature verified, by the
// SHA-256 of their bytes: only the very bytes that verified are found
// again, whatever the CFE's number or uuid. It holds at most its limit of
// CFEs (when full, it forgets them all and starts again). Safe for
// concurrent use.
type VerifiedCFEs struct {
	limit int
	mu    sync.Mutex
	m     map[[sha256.Size]byte]*x509.Certificate
}

// NewVerifiedCFEs returns an empty VerifiedCFEs holding up to limit CFEs
// (4 × cfe.MaxEnvelopeCFEs when limit ≤ 0).
func NewVerifiedCFEs(limit int) *VerifiedCFEs {
	if limit <= 0 {
		limit = 4 * cfe.MaxEnvelopeCFEs
	}
	return &VerifiedCFEs{limit: limit, m: map[[sha256.Size]byte]*x509.Certificate{}}
}

// lookup returns the certificate that signed the CFE of SHA-256 k when it
// verified before.
func (c *VerifiedCFEs) lookup(k [sha256.Size]byte) *x509.Certificate {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[k]
}

// add remembers that the CFE of SHA-256 k verified, signed by cert.
func (c *VerifiedCFEs) add(k [sha256.Size]byte, cert *x509.Certificate) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= c.limit {
		clear(c.m)
	}
	c.m[k] = cert
}

// Len returns how many CFEs c remembers.
func (c *VerifiedCFEs) Len() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}
