package emulator

import (
	"bytes"
	"crypto/x509"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"strconv"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/assets"
	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/cfe/xsdvalid"
	"github.com/cfe-agent/cfe-agent/dgi"
	"github.com/cfe-agent/cfe-agent/signer"
)

// ReportOutcome is a knob over the daily report's later states. DGI
// processes a received report (AR) and EFACCONSULTARENVIOSREPORTE then says
// DR (processed), ER (inconsistencies: correct and resend) or FR
// (superseded by SecEnvio + 1). The emulator decides them itself (settle);
// Config.ReportOutcome, when set, is asked first once a report is
// processed, and a non-empty answer is its state instead of the emulator's
// own judgement.
type ReportOutcome func(r ReceivedReport, now time.Time) string

// ReceivedReport is a report as the emulator keeps it.
type ReceivedReport struct {
	IDReceptor   int64
	RUCEmisor    string
	FechaResumen cfe.Date
	SecEnvio     int
	Received     time.Time
	Estado       string // AR or BR at reception; in Reports, the state a query answers now
	// Findings are the inconsistencies behind an ER (DGI's queries do not
	// carry them: the emulator logs them and Reports lists them).
	Findings []dgi.Motivo
}

// settle returns the state a query answers now for a report, deciding its
// later state once, when its processing time (Config.Processing after
// reception, by the emulator's clock) has passed, and recording it: ER
// when it does not agree with the CFEs the emulator received (compare),
// DR otherwise. FR is set at the reception of a later SecEnvio of the day.
// A report rejected at reception (BR) stays BR.
func (s *services) settle(tx *bolt.Tx, r *reportRecord, now time.Time) (string, error) {
	e := s.e
	switch {
	case r.Estado != dgi.ReportOK:
		return r.Estado, nil
	case r.Later != "":
		return r.Later, nil
	case now.Before(r.Received.Add(e.cfg.Processing)):
		return r.Estado, nil
	}
	if e.cfg.ReportOutcome != nil {
		r.Later = e.cfg.ReportOutcome(ReceivedReport{IDReceptor: r.IDReceptor, RUCEmisor: r.RUCEmisor, FechaResumen: r.FechaResumen,
			SecEnvio: r.SecEnvio, Received: r.Received, Estado: r.Estado}, now)
	}
	if r.Later == "" {
		findings, err := compareReport(tx, r)
		if err != nil {
			return "", err
		}
		r.Later, r.Findings = cfe.ReportProcessed, findings
		if len(findings) > 0 {
			r.Later = cfe.ReportMismatch
		}
	}
	e.log.Info("DGI emulator: report processed", "ruc", r.RUCEmisor, "fecha", r.FechaResumen, "secEnvio", r.SecEnvio,
		"idReceptor", r.IDReceptor, "estado", r.Later, "findings", r.Findings)
	return r.Later, putJSON(tx.Bucket(bucketReports), idKey(r.IDReceptor), r)
}

// Reports lists every report the emulator received, in reception order,
// with the state a query would answer now (deciding the later states that
// are due, as a query does).
func (e *Emulator) Reports() ([]ReceivedReport, error) {
	s := &services{e: e}
	now := e.now()
	var out []ReceivedReport
	err := e.db.Update(func(tx *bolt.Tx) error {
		var recs []reportRecord
		if err := tx.Bucket(bucketReports).ForEach(func(_, v []byte) error {
			var r reportRecord
			if err := json.Unmarshal(v, &r); err != nil {
				return err
			}
			recs = append(recs, r)
			return nil
		}); err != nil {
			return err
		}
		for i := range recs {
			r := &recs[i]
			st, err := s.settle(tx, r, now)
			if err != nil {
				return err
			}
			out = append(out, ReceivedReport{IDReceptor: r.IDReceptor, RUCEmisor: r.RUCEmisor, FechaResumen: r.FechaResumen,
				SecEnvio: r.SecEnvio, Received: r.Received, Estado: st, Findings: r.Findings})
		}
		return nil
	})
	return out, err
}

// supersede marks FR every earlier report received (AR) of rec's RUC and
// day: a later SecEnvio replaces them.
func supersede(tx *bolt.Tx, rec *reportRecord) error {
	b := tx.Bucket(bucketReports)
	var earlier []reportRecord
	err := b.ForEach(func(_, v []byte) error {
		var r reportRecord
		if err := json.Unmarshal(v, &r); err != nil {
			return err
		}
		if r.RUCEmisor == rec.RUCEmisor && r.FechaResumen == rec.FechaResumen && r.Estado == dgi.ReportOK &&
			r.SecEnvio < rec.SecEnvio && r.Later != cfe.ReportSuperseded {
			earlier = append(earlier, r)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, r := range earlier {
		r.Later = cfe.ReportSuperseded
		if err := putJSON(b, idKey(r.IDReceptor), r); err != nil {
			return err
		}
	}
	return nil
}

// receiveReport is EFACRECEPCIONREPORTE: DGI's checks of a daily report
// (RESP 4.1), AR or BR, recorded.
func (s *services) receiveReport(m *dgi.Message, ruc string, tokenCert *x509.Certificate, now time.Time) answer {
	e := s.e
	doc, err := dgi.XMLData(m.Element, "Datain")
	if err != nil {
		return s.fault(dgi.ExcMalformed, err.Error())
	}
	rec := &reportRecord{RUCEmisor: ruc, Received: now, Estado: dgi.ReportOK}
	var ms motives
	r := dgi.ReportRejections
	car, err := reportCaratula(doc)
	if err != nil {
		ms.add(r, "R01", "%s", err)
	} else {
		rec.FechaResumen, rec.SecEnvio = car.fecha, car.sec
		if schema, err := xsdvalid.DGI(assets.SchemaReport); err == nil {
			if err := schema.Validate(doc); err != nil {
				ms.add(r, "R01", "%s", cfe.ErrorMessage(err))
			}
		}
		if car.ruc != ruc {
			ms.add(r, "R02", "el reporte es del RUC %s y el envío está firmado por el RUC %s", car.ruc, ruc)
		}
		if v, err := signer.Verify(doc, signer.VerifyOptions{}); err != nil {
			ms.add(r, "R03", "%s", cfe.ErrorMessage(err))
		} else if signer.CertRUC(v.Certificate) != car.ruc {
			ms.add(r, "R02", "el reporte está firmado por el RUC %q y es del RUC %s", signer.CertRUC(v.Certificate), car.ruc)
		}
		if today := cfe.DateOf(now.In(cfe.Montevideo)); !car.fecha.IsZero() && car.fecha.After(today) {
			ms.add(r, "R06", "la fecha del resumen %s es posterior a la recepción %s", car.fecha, today)
		}
	}
	err = e.db.Update(func(tx *bolt.Tx) error {
		var err error
		if rec.IDReceptor, err = next(tx, metaNextReceptor); err != nil {
			return err
		}
		seqKey := []byte(ruc + "/" + rec.FechaResumen.String())
		seq := tx.Bucket(bucketReportSeq)
		last, _ := strconv.Atoi(string(seq.Get(seqKey)))
		if car != nil && rec.SecEnvio != last+1 {
			ms.add(r, "R05", "el reporte del %s trae SecEnvio %d y se esperaba %d", rec.FechaResumen, rec.SecEnvio, last+1)
		}
		rec.Motivos = ms
		if len(ms) > 0 {
			rec.Estado = dgi.ReportFailed
		} else {
			if rec.Summary, err = readReportSummary(doc); err != nil {
				return err // the schema was checked: a report it accepts is readable
			}
			if err := seq.Put(seqKey, []byte(strconv.Itoa(rec.SecEnvio))); err != nil {
				return err
			}
			if err := supersede(tx, rec); err != nil {
				return err
			}
		}
		return putJSON(tx.Bucket(bucketReports), idKey(rec.IDReceptor), rec)
	})
	if err != nil {
		return s.internal(err)
	}
	return s.signedAnswer(dgi.OpSendReport, ackRepDiario(rec, e.now()))
}

// reportHead is the Caratula of a report.
type reportHead struct {
	ruc   string
	fecha cfe.Date
	sec   int
}

// reportCaratula reads a report's Caratula; an error when the document is
// not a Reporte at all.
func reportCaratula(doc []byte) (*reportHead, error) {
	var x struct {
		XMLName  xml.Name
		Caratula struct {
			RUCEmisor    string `xml:"RUCEmisor"`
			FechaResumen string `xml:"FechaResumen"`
			SecEnvio     string `xml:"SecEnvio"`
		} `xml:"Caratula"`
	}
	if err := xml.NewDecoder(bytes.NewReader(doc)).Decode(&x); err != nil {
		return nil, fmt.Errorf("el reporte no es XML bien formado: %w", err)
	}
	if x.XMLName.Local != "Reporte" || x.XMLName.Space != cfe.NamespaceCFE {
		return nil, fmt.Errorf("el documento no es un Reporte de %s: su raíz es <%s>", cfe.NamespaceCFE, x.XMLName.Local)
	}
	h := &reportHead{ruc: strings.TrimSpace(x.Caratula.RUCEmisor)}
	h.fecha, _ = cfe.ParseDate(strings.TrimSpace(x.Caratula.FechaResumen))
	h.sec, _ = strconv.Atoi(strings.TrimSpace(x.Caratula.SecEnvio))
	return h, nil
}
