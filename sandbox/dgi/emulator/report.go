package emulator

import (
	"bytes"
	"crypto/x509"
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

// ReportOutcome is the seam for the daily report's later states: DGI
// processes a received report (AR) and EFACCONSULTARENVIOSREPORTE then says
// DR (processed), ER (inconsistencies: correct and resend) or FR (superseded
// by SecEnvio + 1). Config.ReportOutcome, when set, decides that state from
// the report as received; nil keeps AR/BR, the states of reception (the
// daily-report issue fills it).
type ReportOutcome func(r ReceivedReport, now time.Time) string

// ReceivedReport is a report as the emulator keeps it.
type ReceivedReport struct {
	IDReceptor   int64
	RUCEmisor    string
	FechaResumen cfe.Date
	SecEnvio     int
	Received     time.Time
	Estado       string // AR or BR
}

func (e *Emulator) reportState(r *reportRecord) string {
	if e.cfg.ReportOutcome == nil || r.Estado != dgi.ReportOK {
		return r.Estado
	}
	if s := e.cfg.ReportOutcome(ReceivedReport{IDReceptor: r.IDReceptor, RUCEmisor: r.RUCEmisor, FechaResumen: r.FechaResumen,
		SecEnvio: r.SecEnvio, Received: r.Received, Estado: r.Estado}, e.now()); s != "" {
		return s
	}
	return r.Estado
}

// receiveReport is EFACRECEPCIONREPORTE: DGI's checks of a daily report
// (RESP 4.1), AR or BR, recorded.
func (e *Emulator) receiveReport(m *dgi.Message, ruc string, tokenCert *x509.Certificate, now time.Time) answer {
	doc, err := dgi.XMLData(m.Element, "Datain")
	if err != nil {
		return e.fault(dgi.ExcMalformed, err.Error())
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
		} else if err := seq.Put(seqKey, []byte(strconv.Itoa(rec.SecEnvio))); err != nil {
			return err
		}
		return putJSON(tx.Bucket(bucketReports), idKey(rec.IDReceptor), rec)
	})
	if err != nil {
		return e.internal(err)
	}
	return e.signedAnswer(dgi.OpSendReport, ackRepDiario(rec, e.now()))
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
