package issuer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// Signer signs an unsigned CFE document with the company certificate.
type Signer interface {
	// Sign returns the signed document bytes and the DigestValue of its
	// reference. unsigned is cfe.MarshalXML's output, which is already in
	// canonical form (C14N 1.0, proven against xmllint --c14n by this
	// package's tests): an implementation may digest it as it is, without
	// parsing it (signer.Signer.SignCanonical). An unusable certificate is a
	// *cfe.Error with Respuesta cfe.RespCertificado.
	Sign(unsigned []byte) (signed []byte, digestValue string, err error)
}

// ReadySigner is a Signer that can tell, before a number is reserved, that it
// cannot sign now (no certificate, an expired one): Ready returns the error
// Sign would return, a *cfe.Error with Respuesta cfe.RespCertificado. The
// issuer asks a Signer that implements it.
type ReadySigner interface {
	Signer
	Ready() error
}

// Config wires an Issuer.
type Config struct {
	Store  cfe.IssueStore
	Signer Signer
	// Emisor returns the issuing company as the active profile describes it.
	Emisor func() cfe.Emisor
	Tax    cfe.TaxConfig
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Zone reads the machine's time zone (the agent's is
	// internal/machinezone.Read); the issuer signs only when the zone it
	// reports passes ZoneStatus.OK. Without one the zone is unknown, and
	// every CFE is rejected with code 96.
	Zone func(now time.Time) ZoneStatus
}

// Issuer signs CFEs. It is safe for concurrent use.
type Issuer struct {
	cfg   Config
	locks keyedMutex
}

// New returns an Issuer.
func New(cfg Config) *Issuer {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Zone == nil {
		cfg.Zone = unknownZone
	}
	return &Issuer{cfg: cfg}
}

// unknownZone is Config.Zone when none is given: a zone that is not known
// fails the rule (fail closed), so an issuer wired without a zone reader
// signs nothing.
func unknownZone(time.Time) ZoneStatus { return ZoneStatus{Source: "none"} }

// Result is the outcome of a successful signing.
type Result struct {
	Issued *cfe.Issued
	// Replayed is true when the uuid had already been signed with the same
	// content and the stored answer is returned unchanged.
	Replayed bool
}

// Issue signs the CFE described by req; a contingency type (2xx) is a paper
// form keyed in with its serie, number and date (keyed.go), stored under
// that number when Config.Store is also a cfe.KeyedStore. Functional rejections are *cfe.Error
// values whose Respuesta is the codigo_respuesta: RespRechazoValidacion
// (EINVALID), RespConflictoUUID (ECONFLICT), RespZonaHoraria (EINVALID),
// RespSinRangoCAE (EUNAVAILABLE), RespCertificado (EUNAVAILABLE). Any other error
// is internal. In every failure no number is consumed and nothing is stored.
func (s *Issuer) Issue(ctx context.Context, req *cfe.Request) (*Result, error) {
	const op = "issuer.Issue"
	if req.UUID == "" {
		req.UUID = uuid.NewString()
	}
	hash, err := requestHash(req)
	if err != nil {
		return nil, &cfe.Error{Code: cfe.EINTERNAL, Op: op, Err: err}
	}
	if isKeyed(req) {
		// A paper contingency receipt keyed in: its number is the form's.
		return s.issueKeyed(ctx, req, hash)
	}
	return s.issue(ctx, op, req.UUID, hash, req.Adenda, func(signedAt time.Time) (*cfe.CFE, error) {
		return req.ToCFE(cfe.IssueParams{Emisor: s.cfg.Emisor(), Tax: s.cfg.Tax, SignedAt: signedAt})
	})
}

// IssueCFE signs a document the caller derived itself, such as the
// counter-receipt of cfe.CounterReceipt: doc is validated, numbered and signed
// exactly as Issue does with a request's document (doc itself is not
// modified). contentHash identifies doc's content for idempotency on id: the
// same id with the same hash answers the stored CFE, with another hash
// RespConflictoUUID. Errors as Issue.
func (s *Issuer) IssueCFE(ctx context.Context, id, contentHash string, doc *cfe.CFE) (*Result, error) {
	return s.issue(ctx, "issuer.IssueCFE", id, contentHash, doc.Adenda, func(signedAt time.Time) (*cfe.CFE, error) {
		c := doc.Clone()
		c.TmstFirma = signedAt
		return c, nil
	})
}

// issue is the path Issue and IssueCFE share: build gives the document to
// sign at signedAt.
//
// Every check that can refuse the request, the caller's uuid included, runs
// before a number is reserved: a refused request never holds a number that
// other CFEs of the serie would wait on.
func (s *Issuer) issue(ctx context.Context, op, id, hash, adenda string, build func(signedAt time.Time) (*cfe.CFE, error)) (*Result, error) {
	if fields := cfe.CheckUUID(id); len(fields) > 0 {
		return nil, cfe.Invalid(op, fields...)
	}
	// One request per uuid at a time: a retry that arrives while the first
	// attempt is still signing waits for it and then gets its stored answer.
	unlock := s.locks.lock(id)
	defer unlock()

	if prev, err := s.cfg.Store.FindByUUID(ctx, id); err == nil {
		if prev.RequestHash != hash {
			return nil, &cfe.Error{Code: cfe.ECONFLICT, Op: op, Respuesta: cfe.RespConflictoUUID,
				Message: fmt.Sprintf("el uuid %s ya se usó para otro comprobante (%s %s-%d)",
					id, prev.Type.Name(), prev.Serie, prev.Nro)}
		}
		return &Result{Issued: prev, Replayed: true}, nil
	} else if cfe.ErrorCode(err) != cfe.ENOTFOUND {
		return nil, err
	}

	now := s.cfg.Now()
	signedAt := now.In(cfe.Montevideo).Truncate(time.Second)
	today := cfe.DateOf(signedAt)
	doc, err := build(signedAt)
	if err != nil {
		return nil, err
	}
	if err := cfe.Validate(doc, s.cfg.Tax); err != nil {
		return nil, err
	}
	if z := s.cfg.Zone(now); !z.OK() {
		return nil, &cfe.Error{Code: cfe.EINVALID, Op: op, Respuesta: cfe.RespZonaHoraria, Message: z.Message()}
	}
	if r, ok := s.cfg.Signer.(ReadySigner); ok {
		if err := r.Ready(); err != nil {
			return nil, err
		}
	}

	for attempt := 1; ; attempt++ {
		issued, err := s.numberAndSign(ctx, doc, signedAt, today, id, hash, adenda)
		if errors.Is(err, cfe.ErrNumberGap) && attempt < maxGapRetries {
			// Another CFE of the serie failed after taking a lower number and
			// nobody took that number again: ours was given back, so sign
			// again with a fresh one (the lowest free) instead of answering
			// this caller with an error that is not its fault.
			continue
		}
		if err != nil {
			return nil, err
		}
		return &Result{Issued: issued}, nil
	}
}

// maxGapRetries bounds the signatures one request makes when a lower number of
// its serie keeps being given back by others (see store.Options.ReclaimTimeout).
const maxGapRetries = 3

// numberAndSign reserves the next number for doc, signs it and commits it. On
// failure the number is given back.
func (s *Issuer) numberAndSign(ctx context.Context, doc *cfe.CFE, signedAt time.Time, today cfe.Date, id, hash, adenda string) (*cfe.Issued, error) {
	// Only a range whose CAE the document agrees with (A-C10, G-C5) is used.
	res, err := s.cfg.Store.ReserveFor(ctx, doc.Type(), today, func(r cfe.CAERange) error {
		return cfe.CheckCAE(doc, r.CAEData())
	})
	if err != nil {
		return nil, err
	}
	issued, err := s.sign(doc, res, signedAt)
	if err == nil {
		issued.UUID, issued.RequestHash, issued.Adenda = id, hash, adenda
		// Once signed, the commit must not be abandoned because the caller went
		// away: higher numbers of the serie wait for this one.
		err = s.cfg.Store.Commit(context.WithoutCancel(ctx), res, issued)
	}
	if err != nil {
		s.cfg.Store.Release(res) // a no-op when Commit already gave the number back
		return nil, err
	}
	return issued, nil
}

// sign numbers doc from the reservation, builds and signs its XML.
func (s *Issuer) sign(doc *cfe.CFE, res *cfe.Reservation, signedAt time.Time) (*cfe.Issued, error) {
	doc.IdDoc.Serie = res.Serie
	doc.IdDoc.Nro = res.Nro
	doc.CAEData = res.Range.CAEData()
	doc.TmstFirma = signedAt
	unsigned, err := cfe.MarshalXML(doc)
	if err != nil {
		return nil, &cfe.Error{Code: cfe.EINTERNAL, Op: "issuer.sign", Err: err}
	}
	signed, digest, err := s.cfg.Signer.Sign(unsigned)
	if err != nil {
		if cfe.RespuestaOf(err) == cfe.RespCertificado {
			return nil, err
		}
		return nil, &cfe.Error{Code: cfe.EUNAVAILABLE, Op: "issuer.sign", Respuesta: cfe.RespCertificado,
			Message: "no se pudo firmar con el certificado de la empresa", Err: err}
	}
	return &cfe.Issued{
		Type:         res.Type,
		Serie:        res.Serie,
		Nro:          res.Nro,
		RangeID:      res.Range.ID,
		CAE:          doc.CAEData,
		TmstFirma:    signedAt,
		XML:          signed,
		CodSeguridad: cfe.SecurityCode(digest),
		DatosQR:      cfe.QRData(doc, digest),
		Total:        cfe.QRAmount(doc),
		Delivery:     cfe.Delivery{State: cfe.DeliveryPending},
		Search:       new(cfe.SearchTextOf(doc)),
	}, nil
}

// requestHash identifies a request's content for idempotency: the SHA-256 of
// its canonical JSON encoding without the uuid.
func requestHash(req *cfe.Request) (string, error) {
	c := *req
	c.UUID = ""
	b, err := json.Marshal(&c)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// keyedMutex serializes work per key.
type keyedMutex struct {
	mu sync.Mutex
	m  map[string]*keyedEntry
}

type keyedEntry struct {
	mu   sync.Mutex
	refs int
}

func (k *keyedMutex) lock(key string) (unlock func()) {
	k.mu.Lock()
	if k.m == nil {
		k.m = make(map[string]*keyedEntry)
	}
	e := k.m[key]
	if e == nil {
		e = &keyedEntry{}
		k.m[key] = e
	}
	e.refs++
	k.mu.Unlock()
	e.mu.Lock()
	return func() {
		e.mu.Unlock()
		k.mu.Lock()
		if e.refs--; e.refs == 0 {
			delete(k.m, key)
		}
		k.mu.Unlock()
	}
}
