package app

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/signer"
	"github.com/cfe-agent/cfe-agent/store"
)

// The daily report (issue 31, docs/reporte-diario.md): the agent's signed
// Reporte of a day, built from the store (live and archived CFEs signed that
// day, the numbers annulled that day, the rate table) with cfe.BuildReport
// and signed with the company's certificate like a CFE.

// Reports builds the signed daily reports of one store and company.
type Reports struct {
	DB      *store.DB
	Signer  *signer.Signer
	Company string // the RUC
	Tax     cfe.TaxConfig
	// Now is the clock of TmstFirmaEnv; nil: time.Now.
	Now func() time.Time
}

// Reports returns the agent's report builder. It fails when the
// certificate could not be loaded: a report is signed.
func (a *Agent) Reports() (*Reports, error) {
	if a.Signer == nil {
		return nil, &cfe.Error{Code: cfe.EUNAVAILABLE, Op: "app.Reports", Err: a.CertErr,
			Message: "no se puede firmar el reporte diario: el certificado de la empresa no está cargado"}
	}
	return &Reports{DB: a.DB, Signer: a.Signer, Company: a.Profile.Company.RUC, Tax: taxConfig(a.Profile.Tax)}, nil
}

// ReportOut is a signed report and what went into it.
type ReportOut struct {
	Date     cfe.Date
	Seq      int
	XML      []byte // the signed Reporte
	CFEs     int
	Annulled []cfe.AnnulledRange
	Rates    []cfe.ReportRate
	CFERates int
}

// Signed returns the signed report of day date with SecEnvio seq: the
// function R2's sender takes (func(ctx, date, seq) ([]byte, error)).
func (r *Reports) Signed(ctx context.Context, date cfe.Date, seq int) ([]byte, error) {
	out, err := r.Build(ctx, date, seq)
	if err != nil {
		return nil, err
	}
	return out.XML, nil
}

// Build builds and signs the report of day date with SecEnvio seq.
//
// Errors: cfe.BuildReport's (EINVALID naming the CFE, the numbers or the
// missing rate), the store's, the signer's.
func (r *Reports) Build(ctx context.Context, date cfe.Date, seq int) (*ReportOut, error) {
	const op = "app.Reports.Build"
	if date.IsZero() {
		return nil, cfe.Errorf(cfe.EINVALID, "falta la fecha del reporte")
	}
	issued, err := r.DB.ListByDate(ctx, date, date, math.MaxInt32)
	if err != nil {
		return nil, err
	}
	annulled, err := r.DB.Annulled(ctx, date, date)
	if err != nil {
		return nil, err
	}
	rates, err := r.DB.RateTable(ctx)
	if err != nil {
		return nil, err
	}
	now := time.Now
	if r.Now != nil {
		now = r.Now
	}
	in := cfe.ReportInput{RUC: r.Company, Date: date, Seq: seq, Annulled: annulled, Rates: rates,
		UIValue: r.Tax.ValorUI, TopeUI: r.Tax.TopeUI, Now: now()}
	in.CFEs = make([][]byte, 0, len(issued))
	for _, c := range issued {
		if c.CorrectedBy != "" {
			continue // a contingency receipt DGI observed, superseded by its correction (counted once, as the correction)
		}
		in.CFEs = append(in.CFEs, c.XML)
	}
	built, err := cfe.BuildReportDetail(in)
	if err != nil {
		return nil, err
	}
	signed, err := r.Signer.SignCanonical(built.XML)
	if err != nil {
		var ce *cfe.Error
		if errors.As(err, &ce) {
			return nil, err
		}
		return nil, &cfe.Error{Code: cfe.EINTERNAL, Op: op, Err: err, Message: "no se pudo firmar el reporte diario"}
	}
	return &ReportOut{Date: date, Seq: seq, XML: signed.XML, CFEs: len(in.CFEs), Annulled: annulled,
		Rates: built.Rates, CFERates: built.CFERates}, nil
}

// ReportFileName is DGI's suggested name of a report file (REP §1 A):
// Rep_RUC_AAAAMMDD_secuencia.xml.
func ReportFileName(ruc string, date cfe.Date, seq int) string {
	return fmt.Sprintf("Rep_%s_%04d%02d%02d_%02d.xml", ruc, date.Year, int(date.Month), date.Day, seq)
}
