package emulator

import (
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/dgi"
	"github.com/cfe-agent/cfe-agent/signer"
)

// maxRequestBytes bounds a request: an envelope of 2 MB in xmlData,
// escaped, with its SOAP wrapping. A larger one is refused whole.
const maxRequestBytes = 6 << 20

// services are DGI's reception and query services over the emulator's
// state: the SOAP requests, the envelope's and the CFEs' verdicts, the
// signed answers. The Emulator owns the state, the listeners and the knobs.
type services struct{ e *Emulator }

// ServiceHandler serves DGI's services at DGI's test paths.
func (e *Emulator) ServiceHandler() http.Handler {
	s := &services{e: e}
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+dgi.PathReception, func(w http.ResponseWriter, r *http.Request) { s.handle(w, r, false) })
	mux.HandleFunc("POST "+dgi.PathQueries, func(w http.ResponseWriter, r *http.Request) { s.handle(w, r, true) })
	return mux
}

// answer is what a request gets: a SOAP message and its HTTP status, or a
// dropped connection.
type answer struct {
	status int
	body   []byte
	drop   bool
}

// handle serves one SOAP request of the reception (query false) or query
// service.
func (s *services) handle(w http.ResponseWriter, r *http.Request, query bool) {
	e := s.e
	a := s.process(r, query)
	if a.drop {
		s.dropConnection(w)
		return
	}
	e.mu.Lock()
	delay := e.delay
	e.mu.Unlock()
	if delay > 0 {
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		}
	}
	w.Header().Set("Content-Type", "text/xml;charset=UTF-8")
	w.WriteHeader(a.status)
	_, _ = w.Write(a.body) // a failure means the client went away
}

// dropConnection closes the client's connection without an answer.
func (s *services) dropConnection(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler) // HTTP/2: abort the stream
	}
	conn, _, err := hj.Hijack()
	if err == nil {
		_ = conn.Close()
	}
}

// fault answers a signed SOAP Fault with DGI's exception code.
func (s *services) fault(code int, detalle string) answer {
	e := s.e
	side := "Server"
	if code == dgi.ExcMalformed || code == 2 || code == dgi.ExcTokenOtherID || code == dgi.ExcTokenOtherRUC ||
		code == dgi.ExcSecurity || code == dgi.ExcCertificate || code == 6 {
		side = "Client"
	}
	b, err := dgi.SignFault(e.creds, side, dgi.ServiceErrorTexts[code], dgi.ServiceErrorXML(code, detalle))
	if err != nil {
		return s.internal(err)
	}
	return answer{status: http.StatusInternalServerError, body: b}
}

func (s *services) internal(err error) answer {
	e := s.e
	e.log.Error("DGI emulator: internal error", "err", err)
	return answer{status: http.StatusInternalServerError, body: dgi.UnsignedFault("Server", "error interno del emulador")}
}

// process reads, authenticates and dispatches one request.
func (s *services) process(r *http.Request, query bool) answer {
	e := s.e
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRequestBytes+1))
	if err != nil {
		return answer{status: http.StatusBadRequest, body: dgi.UnsignedFault("Client", "no se pudo leer el pedido")}
	}
	if len(body) > maxRequestBytes {
		return s.fault(11, fmt.Sprintf("el pedido ocupa más de %d bytes", maxRequestBytes))
	}
	m, err := dgi.ReadMessage(body, dgi.ReadOptions{Signed: true})
	switch {
	case errors.Is(err, dgi.ErrNoSignature):
		// What DGI's gateway answers an unsigned request (secondary source).
		return answer{status: http.StatusInternalServerError, body: dgi.UnsignedFault("Client", "No signature in message!")}
	case errors.Is(err, dgi.ErrBadSignature):
		return s.fault(dgi.ExcSecurity, err.Error())
	case err != nil:
		return s.fault(dgi.ExcMalformed, err.Error())
	}
	op, err := dgi.RequestOperation(m)
	if err != nil || op.Query() != query {
		return s.fault(dgi.ExcException, fmt.Sprintf("el servicio no tiene la operación {%s}%s", m.Space, m.Name))
	}
	if action := strings.Trim(r.Header.Get("SOAPAction"), `"`); action != "" && action != op.SOAPAction() {
		return s.fault(dgi.ExcException, fmt.Sprintf("SOAPAction %q no corresponde a %s", action, op))
	}
	now := e.now()
	cert := m.Certificate
	if now.Before(cert.NotBefore) || now.After(cert.NotAfter) {
		return s.fault(dgi.ExcCertificate, fmt.Sprintf("el certificado «%s» no está vigente (del %s al %s)",
			cert.Subject.CommonName, cert.NotBefore.Format(time.DateOnly), cert.NotAfter.Format(time.DateOnly)))
	}
	ruc := signer.CertRUC(cert)
	if ruc == "" {
		return s.fault(6, "el certificado no indica un RUC en serialNumber")
	}
	switch op {
	case dgi.OpSendEnvelope:
		return s.receiveEnvelope(m, ruc, cert, now)
	case dgi.OpEnvelopeStatus:
		return s.envelopeStatus(m, ruc, now)
	case dgi.OpSendReport:
		return s.receiveReport(m, ruc, cert, now)
	case dgi.OpCFEStatus:
		return s.cfeState(m, ruc, now)
	case dgi.OpEnvelopes:
		return s.envelopes(m, ruc)
	case dgi.OpReports:
		return s.reports(m, ruc)
	}
	return s.fault(dgi.ExcException, "operación no implementada")
}

// signedAnswer signs an ACK document and wraps it in op's answer.
func (s *services) signedAnswer(op dgi.Operation, doc []byte) answer {
	e := s.e
	signed, err := e.signer.Sign(doc)
	if err != nil {
		return s.internal(err)
	}
	b, err := dgi.SignAnswer(op, e.creds, signed.XML)
	if err != nil {
		return s.internal(err)
	}
	return answer{status: http.StatusOK, body: b}
}

func newToken() string {
	b := make([]byte, 64)
	_, _ = rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)
}

// receiveEnvelope is EFACRECEPCIONSOBRE: the envelope's checks (S codes),
// then, for a received envelope, each CFE's verdict (decided now, revealed
// from Fechahora on), all recorded in one transaction.
func (s *services) receiveEnvelope(m *dgi.Message, ruc string, cert *x509.Certificate, now time.Time) answer {
	e := s.e
	doc, err := dgi.XMLData(m.Element, "Datain")
	if err != nil {
		return s.fault(dgi.ExcMalformed, err.Error())
	}
	env, ms := checkEnvelope(doc, ruc)
	rec := &envelopeRecord{RUCEmisor: ruc, Received: now, Estado: dgi.EnvelopeReceived, Motivos: ms}
	var verdicts []verdict
	if env != nil {
		if cfe.ValidRUC(env.RUCEmisor) {
			rec.RUCEmisor = env.RUCEmisor
		}
		if env.IdEmisor >= 0 && env.IdEmisor <= cfe.MaxEnvelopeID {
			rec.IdEmisor = env.IdEmisor
		}
		rec.CantCFE = min(len(env.CFEs), cfe.MaxEnvelopeCFEs)
	}
	if len(ms) > 0 {
		rec.Estado = dgi.EnvelopeRejected
	}
	err = e.db.Update(func(tx *bolt.Tx) error {
		var err error
		if rec.IDReceptor, err = next(tx, metaNextReceptor); err != nil {
			return err
		}
		if rec.IDRespuesta, err = next(tx, metaNextRespuesta); err != nil {
			return err
		}
		index := tx.Bucket(bucketEnvIndex)
		indexKey := fmt.Appendf(nil, "%s/%d", rec.RUCEmisor, rec.IdEmisor)
		if rec.Estado == dgi.EnvelopeReceived {
			if prev := index.Get(indexKey); prev != nil {
				rec.Estado = dgi.EnvelopeRejected
				var first envelopeRecord
				if _, err := getJSON(tx.Bucket(bucketEnvelopes), prev, &first); err != nil {
					return err
				}
				rec.Motivos = append(rec.Motivos, dgi.Motivo{Codigo: "S08", Glosa: dgi.EnvelopeReasons["S08"],
					Detalle: fmt.Sprintf("el sobre %d del RUC %s ya se recibió el %s con IDReceptor %d", rec.IdEmisor, rec.RUCEmisor,
						dgi.FormatFechaHora(first.Received), first.IDReceptor)})
			}
		}
		if rec.Estado == dgi.EnvelopeReceived {
			rec.Token = newToken() // InfoRespOri of a CFE repeated in this envelope names it
		}
		cfes := tx.Bucket(bucketCFEs)
		if env != nil {
			for i, c := range env.CFEs {
				var knob *Rejection
				if h, err := cfe.ReadCFEHead(c); err == nil {
					knob = rejection(tx, rec.RUCEmisor, h.Type, h.Serie, h.Nro)
				}
				if rec.Estado != dgi.EnvelopeReceived {
					if h, err := cfe.ReadCFEHead(c); err == nil && h.RUCEmisor == rec.RUCEmisor {
						if err := countCFE(cfes, rec, verdict{Tipo: h.Type, Serie: h.Serie, Nro: h.Nro}, false); err != nil {
							return err
						}
					}
					continue
				}
				v := judgeCFE(i+1, c, env.Cert, knob)
				if err := s.duplicate(tx, rec, &v); err != nil {
					return err
				}
				verdicts = append(verdicts, v)
				if v.Nro > 0 {
					if err := countCFE(cfes, rec, v, true); err != nil {
						return err
					}
				}
			}
		}
		if rec.Estado == dgi.EnvelopeReceived {
			rec.Fechahora, rec.CFEs = now.Add(e.cfg.Processing).Truncate(time.Second), verdicts
			if err := index.Put(indexKey, idKey(rec.IDReceptor)); err != nil {
				return err
			}
		}
		e.mu.Lock()
		if e.drops > 0 {
			e.drops--
			rec.Dropped = true
		}
		e.mu.Unlock()
		return putJSON(tx.Bucket(bucketEnvelopes), idKey(rec.IDReceptor), rec)
	})
	if err != nil {
		return s.internal(err)
	}
	e.log.Info("DGI emulator: envelope received", "ruc", rec.RUCEmisor, "idEmisor", rec.IdEmisor, "idReceptor", rec.IDReceptor,
		"estado", rec.Estado, "cfes", len(rec.CFEs), "dropped", rec.Dropped)
	if rec.Dropped {
		return answer{drop: true}
	}
	return s.signedAnswer(dgi.OpSendEnvelope, ackSobre(rec, e.now()))
}

// duplicate applies E02: a CFE whose number DGI already holds (in an
// earlier envelope, or earlier in this one) is rejected, naming the
// envelope that first carried it.
func (s *services) duplicate(tx *bolt.Tx, rec *envelopeRecord, v *verdict) error {
	if v.Nro <= 0 {
		return nil
	}
	if info, _ := v.Tipo.Info(); info.Contingency {
		return nil // a CFC is sent again corrected after CE: not a duplicate
	}
	var prev cfeRecord
	ok, err := getJSON(tx.Bucket(bucketCFEs), cfeKey(rec.RUCEmisor, v.Tipo, v.Serie, v.Nro), &prev)
	if err != nil || !ok || !prev.Registered {
		return err
	}
	orig := &dgi.OriginalEnvelope{IDReceptor: prev.IDReceptor}
	if prev.IDReceptor == rec.IDReceptor {
		orig.IDRespuesta, orig.IDEmisor, orig.Token = rec.IDRespuesta, rec.IdEmisor, rec.Token
	} else {
		var first envelopeRecord
		if _, err := getJSON(tx.Bucket(bucketEnvelopes), idKey(prev.IDReceptor), &first); err != nil {
			return err
		}
		orig.IDRespuesta, orig.IDEmisor, orig.Token = first.IDRespuesta, first.IdEmisor, first.Token
	}
	v.Estado = dgi.CFERejected
	v.Motivos = []dgi.Motivo{{Codigo: "E02", Glosa: dgi.CFERejections["E02"],
		Detalle: fmt.Sprintf("el CFE ya se recibió en el sobre con IDReceptor %d", prev.IDReceptor)}}
	v.Original = orig
	return nil
}

// countCFE records that an envelope carried a CFE; first (an envelope
// received, AS) also records its verdict when it is the first one.
func countCFE(b *bolt.Bucket, rec *envelopeRecord, v verdict, received bool) error {
	key := cfeKey(rec.RUCEmisor, v.Tipo, v.Serie, v.Nro)
	var r cfeRecord
	if _, err := getJSON(b, key, &r); err != nil {
		return err
	}
	r.RUCEmisor, r.Tipo, r.Serie, r.Nro = rec.RUCEmisor, v.Tipo, v.Serie, v.Nro
	r.Envelopes++
	if received && !r.Registered && !isE02(v) {
		r.IDReceptor, r.Estado = rec.IDReceptor, v.Estado
		if !v.TmstCFE.IsZero() {
			r.Signed = cfe.DateOf(v.TmstCFE.In(cfe.Montevideo))
		}
		info, _ := v.Tipo.Info()
		r.Registered = !info.Contingency && !(v.Estado == dgi.CFERejected && hasCode(v.Motivos, "E09"))
		if info.Contingency && v.Estado == dgi.CFEReceived {
			r.Registered = true
		}
	}
	return putJSON(b, key, r)
}

func isE02(v verdict) bool { return v.Original != nil }

func hasCode(ms []dgi.Motivo, code string) bool {
	for _, m := range ms {
		if m.Codigo == code {
			return true
		}
	}
	return false
}

// envelopeStatus is EFACCONSULTARESTADOENVIO: the ACKCFE of an envelope,
// once its Fechahora has passed.
func (s *services) envelopeStatus(m *dgi.Message, ruc string, now time.Time) answer {
	e := s.e
	doc, err := dgi.XMLData(m.Element, "Datain")
	if err != nil {
		return s.fault(dgi.ExcMalformed, err.Error())
	}
	id, token, err := dgi.ParseConsultaCFE(doc)
	if err != nil {
		return s.fault(dgi.ExcMalformed, err.Error())
	}
	var rec envelopeRecord
	var idResp int64
	found := false
	err = e.db.Update(func(tx *bolt.Tx) error {
		var err error
		if found, err = getJSON(tx.Bucket(bucketEnvelopes), idKey(id), &rec); err != nil || !found {
			return err
		}
		idResp, err = next(tx, metaNextRespuesta)
		return err
	})
	switch {
	case err != nil:
		return s.internal(err)
	case !found || rec.Estado != dgi.EnvelopeReceived:
		return s.fault(dgi.ExcNoSuchEnvelope, fmt.Sprintf("no hay un sobre recibido con IDReceptor %d", id))
	case rec.RUCEmisor != ruc:
		return s.fault(dgi.ExcTokenOtherRUC, fmt.Sprintf("el sobre %d no es del RUC %s", id, ruc))
	case rec.Token != token:
		return s.fault(dgi.ExcTokenOtherID, fmt.Sprintf("el Token no es el del sobre %d", id))
	case now.Before(rec.Fechahora):
		return s.fault(dgi.ExcEnvelopePending, "consulte desde "+dgi.FormatFechaHora(rec.Fechahora))
	}
	return s.signedAnswer(dgi.OpEnvelopeStatus, ackCFE(&rec, idResp, now))
}

// cfeState is EFACCONSULTARESTADOCFE.
func (s *services) cfeState(m *dgi.Message, ruc string, now time.Time) answer {
	e := s.e
	q, err := dgi.ReadCFEQuery(m.Element)
	if err != nil {
		return s.fault(dgi.ExcMalformed, err.Error())
	}
	var st *dgi.CFEState
	err = e.db.View(func(tx *bolt.Tx) error {
		var r cfeRecord
		ok, err := getJSON(tx.Bucket(bucketCFEs), cfeKey(ruc, q.Tipo, q.Serie, q.Nro), &r)
		if err != nil || !ok || r.IDReceptor == 0 {
			return err
		}
		var env envelopeRecord
		if _, err := getJSON(tx.Bucket(bucketEnvelopes), idKey(r.IDReceptor), &env); err != nil {
			return err
		}
		if now.Before(env.Fechahora) {
			return errPending{env.Fechahora}
		}
		st = &dgi.CFEState{Estado: r.Estado, IdEmisor: env.IdEmisor, IdReceptor: env.IDReceptor, Token: env.Token, Fechahora: env.Fechahora}
		return nil
	})
	var pending errPending
	switch {
	case errors.As(err, &pending):
		return s.fault(dgi.ExcNotProcessed, "el sobre que lo contiene se procesa; consulte desde "+dgi.FormatFechaHora(pending.at))
	case err != nil:
		return s.internal(err)
	}
	return s.queryAnswer(dgi.OpCFEStatus, dgi.CFEStateContent(st))
}

type errPending struct{ at time.Time }

func (errPending) Error() string { return "not processed yet" }

func (s *services) queryAnswer(op dgi.Operation, content []byte) answer {
	e := s.e
	b, err := dgi.SignQueryAnswer(op, e.creds, content)
	if err != nil {
		return s.internal(err)
	}
	return answer{status: http.StatusOK, body: b}
}

// envelopes is EFACCONSULTARENVIOSSOBRE: the caller's envelopes received in
// the period.
func (s *services) envelopes(m *dgi.Message, ruc string) answer {
	e := s.e
	q, err := dgi.ReadEnvelopeQuery(m.Element)
	if err != nil {
		return s.fault(dgi.ExcMalformed, err.Error())
	}
	var list []dgi.EnvelopeInfo
	err = e.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketEnvelopes).ForEach(func(_, v []byte) error {
			var r envelopeRecord
			if err := json.Unmarshal(v, &r); err != nil {
				return err
			}
			switch {
			case r.RUCEmisor != ruc, r.Received.Before(q.Desde), r.Received.After(q.Hasta),
				q.IdEmisor != 0 && r.IdEmisor != q.IdEmisor, q.IdReceptor != 0 && r.IDReceptor != q.IdReceptor:
				return nil
			}
			list = append(list, dgi.EnvelopeInfo{Estado: r.Estado, FechaHoraSobre: r.Received, IdEmisor: r.IdEmisor,
				IdReceptor: r.IDReceptor, Token: r.Token, Fechahora: r.Fechahora})
			return nil
		})
	})
	if err != nil {
		return s.internal(err)
	}
	return s.queryAnswer(dgi.OpEnvelopes, dgi.EnvelopesContent(list))
}

// reports is EFACCONSULTARENVIOSREPORTE.
func (s *services) reports(m *dgi.Message, ruc string) answer {
	e := s.e
	q, err := dgi.ReadReportQuery(m.Element)
	if err != nil {
		return s.fault(dgi.ExcMalformed, err.Error())
	}
	var list []dgi.ReportInfo
	now := e.now()
	err = e.db.Update(func(tx *bolt.Tx) error {
		var recs []reportRecord
		if err := tx.Bucket(bucketReports).ForEach(func(_, v []byte) error {
			var r reportRecord
			if err := json.Unmarshal(v, &r); err != nil {
				return err
			}
			if r.RUCEmisor == ruc && r.FechaResumen == q.FechaResumen && (q.Secuencia == 0 || r.SecEnvio == q.Secuencia) {
				recs = append(recs, r)
			}
			return nil
		}); err != nil {
			return err
		}
		for i := range recs {
			st, err := s.settle(tx, &recs[i], now)
			if err != nil {
				return err
			}
			list = append(list, dgi.ReportInfo{IdEmisor: 0, IdReceptor: recs[i].IDReceptor, Estado: st, FechaHoraRecepcion: recs[i].Received})
		}
		return nil
	})
	if err != nil {
		return s.internal(err)
	}
	return s.queryAnswer(dgi.OpReports, dgi.ReportsContent(list))
}
