package issuer

import (
	"context"
	"fmt"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// Keying in contingency receipts (CFC, types 2xx): a paper form the shop
// handed out while it could not issue electronically, keyed in afterwards
// with the serie, number and date printed on it, checked like the type it
// replaces, signed with its contingency range's CAE and stored
// (docs/contingencia.md). Its number is the form's: nothing is reserved.

// keyedJob is a contingency receipt checked and ready to sign.
type keyedJob struct {
	id, hash, corrige string
	doc               *cfe.CFE
	rng               cfe.CAERange
	signedAt          time.Time
}

// isKeyed reports whether req is a contingency receipt keyed in.
func isKeyed(req *cfe.Request) bool {
	if req.CFE == nil {
		return false
	}
	info, ok := req.CFE.IdDoc.TipoCfe.Info()
	return ok && info.Contingency
}

func (s *Issuer) keyedStore(op string) (cfe.KeyedStore, error) {
	ks, ok := s.cfg.Store.(cfe.KeyedStore)
	if !ok {
		return nil, &cfe.Error{Code: cfe.EINTERNAL, Op: op, Message: "el almacenamiento no admite comprobantes de contingencia"}
	}
	return ks, nil
}

// issueKeyed is Issue for a contingency receipt: every check, then the
// signature with its range's CAE, then the commit.
func (s *Issuer) issueKeyed(ctx context.Context, req *cfe.Request, hash string) (*Result, error) {
	const op = "issuer.Issue"
	if fields := cfe.CheckUUID(req.UUID); len(fields) > 0 {
		return nil, cfe.Invalid(op, fields...)
	}
	unlock := s.locks.lock(req.UUID)
	defer unlock()
	job, replay, err := s.prepareKeyed(ctx, req, hash)
	if err != nil || replay != nil {
		return replay, err
	}
	issued, err := s.signKeyed(job)
	if err != nil {
		return nil, err
	}
	ks, err := s.keyedStore(op)
	if err != nil {
		return nil, err
	}
	// Signed: the commit is not abandoned because the caller went away.
	if err := ks.CommitKeyed(context.WithoutCancel(ctx), []cfe.KeyedCFE{{Doc: issued, Corrects: job.corrige}}); err != nil {
		return nil, err
	}
	return &Result{Issued: issued}, nil
}

// prepareKeyed runs every check of a keyed-in receipt that can refuse it,
// reading only: the uuid (a replay answers the stored CFE), the request and
// DGI's rules for the type it replaces, the time zone and the certificate,
// the number inside an imported contingency range and not keyed in yet (or
// the observed one corrige names), the form's date within the range's
// validity, and the rules tying the receipt to its CAE.
func (s *Issuer) prepareKeyed(ctx context.Context, req *cfe.Request, hash string) (*keyedJob, *Result, error) {
	const op = "issuer.Issue"
	ks, err := s.keyedStore(op)
	if err != nil {
		return nil, nil, err
	}
	if prev, err := s.cfg.Store.FindByUUID(ctx, req.UUID); err == nil {
		if prev.RequestHash != hash {
			return nil, nil, &cfe.Error{Code: cfe.ECONFLICT, Op: op, Respuesta: cfe.RespConflictoUUID,
				Message: fmt.Sprintf("el uuid %s ya se usó para otro comprobante (%s %s-%d)", req.UUID, prev.Type.Name(), prev.Serie, prev.Nro)}
		}
		return nil, &Result{Issued: prev, Replayed: true}, nil
	} else if cfe.ErrorCode(err) != cfe.ENOTFOUND {
		return nil, nil, err
	}
	now := s.cfg.Now()
	signedAt := now.In(cfe.Montevideo).Truncate(time.Second)
	doc, err := req.ToCFE(cfe.IssueParams{Emisor: s.cfg.Emisor(), Tax: s.cfg.Tax, SignedAt: signedAt})
	if err != nil {
		return nil, nil, err
	}
	if err := cfe.Validate(doc, s.cfg.Tax); err != nil {
		return nil, nil, err
	}
	if z := s.cfg.Zone(now); !z.OK() {
		return nil, nil, &cfe.Error{Code: cfe.EINVALID, Op: op, Respuesta: cfe.RespZonaHoraria, Message: z.Message()}
	}
	if r, ok := s.cfg.Signer.(ReadySigner); ok {
		if err := r.Ready(); err != nil {
			return nil, nil, err
		}
	}
	rng, err := ks.KeyedRange(ctx, doc.Type(), doc.IdDoc.Serie, doc.IdDoc.Nro, req.Corrige)
	if err != nil {
		return nil, nil, err
	}
	// The form was filled in while its range was valid: not before DGI
	// authorized it, not after it expired (keyed in later, its signature
	// may be after the expiry: docs/contingencia.md).
	switch f := doc.IdDoc.FchEmis; {
	case f.Before(rng.Autorizado):
		return nil, nil, cfe.Invalid(op, cfe.FieldError{Campo: "cfe.idDoc.fechaEmision",
			Mensaje: fmt.Sprintf("el formulario tiene fecha %s, anterior a la autorización de su rango CAE (%s, %d a %d, autorizado el %s)", f, rng.CAEID, rng.DNro, rng.HNro, rng.Autorizado)})
	case f.After(rng.Vencimiento):
		return nil, nil, cfe.Invalid(op, cfe.FieldError{Campo: "cfe.idDoc.fechaEmision",
			Mensaje: fmt.Sprintf("el formulario tiene fecha %s, posterior al vencimiento de su rango CAE (%s, %d a %d, vencido el %s)", f, rng.CAEID, rng.DNro, rng.HNro, rng.Vencimiento)})
	}
	if err := cfe.CheckCAE(doc, rng.CAEData()); err != nil {
		return nil, nil, err
	}
	return &keyedJob{id: req.UUID, hash: hash, corrige: req.Corrige, doc: doc, rng: rng, signedAt: signedAt}, nil, nil
}

// signKeyed signs a checked job with its range's CAE.
func (s *Issuer) signKeyed(job *keyedJob) (*cfe.Issued, error) {
	res := &cfe.Reservation{Type: job.doc.Type(), Serie: job.doc.IdDoc.Serie, Nro: job.doc.IdDoc.Nro, Range: job.rng}
	issued, err := s.sign(job.doc, res, job.signedAt)
	if err != nil {
		return nil, err
	}
	issued.UUID, issued.RequestHash, issued.Corrects = job.id, job.hash, job.corrige
	issued.Adenda = job.doc.Adenda
	return issued, nil
}

// KeyedLine is the outcome of one receipt of IssueKeyedBatch: its stored
// CFE (Replayed when its uuid was already stored with the same content), or
// why it was refused.
type KeyedLine struct {
	Issued   *cfe.Issued
	Replayed bool
	Err      error
}

// IssueKeyedBatch keys in contingency receipts all or nothing: every
// request is checked as Issue checks one (and no two may name the same
// uuid or number) before any is signed; if one is refused, none is signed
// and the lines say which and why (the others have neither Issued nor Err).
// Otherwise all are signed and stored in one transaction; a request whose
// uuid is already stored with the same content is answered from the store
// and not stored again. The error is non-nil whenever nothing was stored
// because of a refusal or a failure.
func (s *Issuer) IssueKeyedBatch(ctx context.Context, reqs []*cfe.Request) ([]KeyedLine, error) {
	const op = "issuer.IssueKeyedBatch"
	lines := make([]KeyedLine, len(reqs))
	jobs := make([]*keyedJob, len(reqs))
	refused := 0
	uuids, numbers := map[string]int{}, map[string]int{}
	for i, req := range reqs {
		fail := func(err error) { lines[i].Err, refused = err, refused+1 }
		if !isKeyed(req) {
			fail(cfe.Invalid(op, cfe.FieldError{Campo: "cfe.idDoc.tipoCfe", Mensaje: "se espera un comprobante de contingencia (201 a 282)"}))
			continue
		}
		if req.UUID == "" {
			fail(cfe.Invalid(op, cfe.FieldError{Campo: "uuid", Mensaje: "es obligatorio: identifica el ingreso (reintentar con el mismo uuid no lo ingresa dos veces)"}))
			continue
		}
		if j, dup := uuids[req.UUID]; dup {
			fail(cfe.Invalid(op, cfe.FieldError{Campo: "uuid", Mensaje: fmt.Sprintf("se repite en la línea %d", j+1)}))
			continue
		}
		uuids[req.UUID] = i
		id := req.CFE.IdDoc
		if k := fmt.Sprintf("%d/%s/%d", int(id.TipoCfe), id.Serie, id.Numero); id.Numero != 0 {
			if j, dup := numbers[k]; dup {
				fail(cfe.Invalid(op, cfe.FieldError{Campo: "cfe.idDoc.numero", Mensaje: fmt.Sprintf("%s %s-%d se repite en la línea %d", id.TipoCfe.Name(), id.Serie, id.Numero, j+1)}))
				continue
			}
			numbers[k] = i
		}
		hash, err := requestHash(req)
		if err != nil {
			return lines, &cfe.Error{Code: cfe.EINTERNAL, Op: op, Err: err}
		}
		job, replay, err := s.prepareKeyed(ctx, req, hash)
		switch {
		case err != nil:
			fail(err)
		case replay != nil:
			lines[i] = KeyedLine{Issued: replay.Issued, Replayed: true}
		default:
			jobs[i] = job
		}
	}
	if refused > 0 {
		for i := range lines {
			lines[i].Issued, lines[i].Replayed = nil, false
		}
		return lines, cfe.Errorf(cfe.EINVALID, "%d de %d comprobantes no se pueden ingresar: no se ingresó ninguno", refused, len(reqs))
	}
	var docs []cfe.KeyedCFE
	for i, job := range jobs {
		if job == nil {
			continue
		}
		issued, err := s.signKeyed(job)
		if err != nil {
			lines[i].Err = err
			return lines, err
		}
		lines[i].Issued = issued
		docs = append(docs, cfe.KeyedCFE{Doc: issued, Corrects: job.corrige})
	}
	if len(docs) == 0 {
		return lines, nil
	}
	ks, err := s.keyedStore(op)
	if err != nil {
		return lines, err
	}
	if err := ks.CommitKeyed(context.WithoutCancel(ctx), docs); err != nil {
		for i := range lines {
			if !lines[i].Replayed {
				lines[i].Issued = nil
			}
		}
		return lines, err
	}
	return lines, nil
}
