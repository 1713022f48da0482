package app

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
	"github.com/cfe-agent/cfe-agent/store"
)

// The technician's daily-report commands (cfe-agent reporte, numeros anular,
// cotizaciones): through the running agent when there is one (it holds the
// store: POST /reporte-diario), else on the store directly.

// dailyReportTimeout bounds one command through the running agent.
const dailyReportTimeout = 10 * time.Minute

// DailyReportService runs the commands on an open agent (localapi.DailyReports).
type DailyReportService struct{ A *Agent }

// DailyReport runs req on the agent's store.
func (s DailyReportService) DailyReport(ctx context.Context, req apitype.DailyReportRequest) (*apitype.DailyReportResult, error) {
	a := s.A
	switch req.Accion {
	case "reporte":
		date, err := cfe.ParseDate(req.Fecha)
		if err != nil {
			return nil, cfe.Invalid("app.DailyReport", cfe.FieldError{Campo: "fecha", Mensaje: err.Error()})
		}
		seq := req.SecEnvio
		if seq == 0 {
			seq = 1
		}
		r, err := a.Reports()
		if err != nil {
			return nil, err
		}
		out, err := r.Build(ctx, date, seq)
		if err != nil {
			return nil, err
		}
		return &apitype.DailyReportResult{XML: string(out.XML), Resumen: out.Summary()}, nil
	case "anular":
		ar := cfe.AnnulledRange{Type: cfe.Type(req.Tipo), Serie: req.Serie, From: req.Desde, To: req.Hasta, Note: req.Motivo}
		if err := a.DB.AnnulNumbers(ctx, ar); err != nil {
			return nil, err
		}
		if d := a.AnnulledDeliverer; d != nil {
			d.Kick() // provider mode: the numbers go to the hosted service now (app/reportprov.go)
		}
		return &apitype.DailyReportResult{Resumen: fmt.Sprintf("anulados %s: %d números de %s serie %s (motivo: %s); no se firmarán y el reporte diario de hoy los informa",
			ar, ar.Count(), ar.Type.Name(), ar.Serie, strings.TrimSpace(ar.Note))}, nil
	case "fijar_cotizaciones":
		rates, err := quotesToRates(req.Cotizaciones)
		if err != nil {
			return nil, err
		}
		if err := a.DB.SetRates(ctx, rates); err != nil {
			return nil, err
		}
		return &apitype.DailyReportResult{Resumen: fmt.Sprintf("%d cotizaciones guardadas", len(rates))}, nil
	case "cotizaciones":
		rates, err := a.DB.Rates(ctx)
		if err != nil {
			return nil, err
		}
		res := &apitype.DailyReportResult{}
		for _, r := range rates {
			res.Cotizaciones = append(res.Cotizaciones, apitype.RateQuote{Fecha: r.Day.String(), Moneda: r.Currency,
				Valor: r.Value.String(), Origen: r.Source})
		}
		return res, nil
	}
	return nil, cfe.Invalid("app.DailyReport", cfe.FieldError{Campo: "accion",
		Mensaje: fmt.Sprintf("%q no es una acción: reporte, anular, fijar_cotizaciones o cotizaciones", req.Accion)})
}

func quotesToRates(qs []apitype.RateQuote) ([]store.Rate, error) {
	var out []store.Rate
	for i, q := range qs {
		d, err := cfe.ParseDate(q.Fecha)
		if err != nil {
			return nil, cfe.Errorf(cfe.EINVALID, "cotización %d: %v", i+1, err)
		}
		v, err := decimal.NewFromString(strings.TrimSpace(strings.ReplaceAll(q.Valor, ",", ".")))
		if err != nil {
			return nil, cfe.Errorf(cfe.EINVALID, "cotización %d: el valor %q no es un número", i+1, q.Valor)
		}
		out = append(out, store.Rate{Currency: strings.ToUpper(strings.TrimSpace(q.Moneda)), Day: d, Value: v, Source: q.Origen})
	}
	return out, nil
}

// Summary is the technician's summary of a built report.
func (o *ReportOut) Summary() string {
	s, err := cfe.DescribeReport(o.XML)
	if err != nil {
		s = "reporte diario"
	}
	var b strings.Builder
	b.WriteString(s)
	for _, r := range o.Rates {
		fmt.Fprintf(&b, "\ncotización usada: %s para operaciones del %s = %s (%s)", r.Currency, r.Day, r.Rate, r.Source)
	}
	if o.CFERates > 0 {
		fmt.Fprintf(&b, "\n%d CFE convertidos al tipo de cambio del propio comprobante (notas, e-Resguardos, UI/UR o fecha posterior; REP §1)", o.CFERates)
	}
	for _, a := range o.Annulled {
		fmt.Fprintf(&b, "\nanulados %s (%s) %s", a, a.Reason, a.Note)
	}
	return b.String()
}

// RunDailyReport runs a daily-report command: through the running agent
// when there is one, else on the store (the agent stopped).
func RunDailyReport(ctx context.Context, opts Options, req apitype.DailyReportRequest, log *slog.Logger) (*apitype.DailyReportResult, error) {
	dataDir, cfg, _, err := LoadConfig(opts)
	if err != nil {
		return nil, err
	}
	c, info, ok, err := adminClient(dataDir, cfg, dailyReportTimeout)
	if err != nil {
		return nil, err
	}
	if ok {
		res, err := c.DailyReport(ctx, req)
		switch {
		case err == nil:
			return res, nil
		case !agentGone(err):
			return nil, &cfe.Error{Code: cfe.ErrorCode(err), Err: err,
				Message: fmt.Sprintf("el agente en ejecución (%s): %s", info.BaseURL, cfe.ErrorMessage(err))}
		}
	}
	a, err := Open(ctx, opts, log)
	if err != nil {
		return nil, err
	}
	defer a.Close()
	return DailyReportService{A: a}.DailyReport(ctx, req)
}

// WriteDailyReport runs "cfe-agent reporte": the signed report of date
// (AAAA-MM-DD) with SecEnvio seq written to out ("": DGI's suggested name
// in the working folder). It returns the file and the summary.
func WriteDailyReport(ctx context.Context, opts Options, date string, seq int, out string, log *slog.Logger) (string, string, error) {
	d, err := cfe.ParseDate(date)
	if err != nil {
		return "", "", cfe.Errorf(cfe.EINVALID, "--fecha: %v", err)
	}
	if seq < 1 || seq > 99 {
		return "", "", cfe.Errorf(cfe.EINVALID, "--sec-envio: debe estar entre 1 y 99")
	}
	res, err := RunDailyReport(ctx, opts, apitype.DailyReportRequest{Accion: "reporte", Fecha: d.String(), SecEnvio: seq}, log)
	if err != nil {
		return "", "", err
	}
	if out == "" {
		ruc := ""
		if m := rucInReport.FindStringSubmatch(res.XML); m != nil {
			ruc = m[1]
		}
		out = ReportFileName(ruc, d, seq)
	}
	if err := os.WriteFile(out, []byte(res.XML), 0o600); err != nil {
		return "", "", fmt.Errorf("no se puede escribir %s: %w", out, UnwrapPathError(err))
	}
	abs, _ := filepath.Abs(out)
	return abs, res.Resumen, nil
}

var rucInReport = regexp.MustCompile(`<RUCEmisor>([0-9]{12})</RUCEmisor>`)

// annulArg is TIPO:SERIE:DESDE-HASTA (or TIPO:SERIE:NUMERO).
var annulArg = regexp.MustCompile(`^([0-9]{3}):([A-Z]{1,2}):([0-9]{1,7})(?:-([0-9]{1,7}))?$`)

// ParseAnnulArg reads the numbers of "numeros anular".
func ParseAnnulArg(s string) (apitype.DailyReportRequest, error) {
	m := annulArg.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return apitype.DailyReportRequest{}, cfe.Errorf(cfe.EINVALID,
			"%q no es TIPO:SERIE:DESDE-HASTA (por ejemplo 101:A:120-150, o 101:A:120 para un solo número)", s)
	}
	t, _ := strconv.Atoi(m[1])
	from, _ := strconv.ParseInt(m[3], 10, 64)
	to := from
	if m[4] != "" {
		to, _ = strconv.ParseInt(m[4], 10, 64)
	}
	return apitype.DailyReportRequest{Accion: "anular", Tipo: t, Serie: m[2], Desde: from, Hasta: to}, nil
}

// ReadRatesCSV reads the technician's rate file: one quote a line,
// fecha,moneda,valor (fecha AAAA-MM-DD or DD/MM/AAAA, the day of the BCU's
// close; moneda ISO 4217; valor in pesos with a point or a comma as the
// decimal mark; with the comma, the fields are separated by ';'). A first
// line of headers (fecha,moneda,valor) is skipped; so are empty lines and
// lines starting with '#'. source names the file in each quote.
func ReadRatesCSV(r io.Reader, source string) ([]apitype.RateQuote, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	text := strings.TrimPrefix(string(data), "\ufeff")
	cr := csv.NewReader(strings.NewReader(text))
	cr.Comment, cr.FieldsPerRecord, cr.TrimLeadingSpace = '#', -1, true
	if strings.Count(firstLine(text), ";") > 0 {
		cr.Comma = ';'
	}
	var out []apitype.RateQuote
	for line := 1; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, cfe.Errorf(cfe.EINVALID, "%s: %v", source, err)
		}
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		if len(rec) != 3 {
			return nil, cfe.Errorf(cfe.EINVALID, "%s, línea %d: se esperan tres campos fecha,moneda,valor y hay %d", source, line, len(rec))
		}
		if line == 1 && strings.EqualFold(strings.TrimSpace(rec[0]), "fecha") {
			continue
		}
		fecha := strings.TrimSpace(rec[0])
		if t, err := time.Parse("02/01/2006", fecha); err == nil {
			fecha = t.Format(time.DateOnly)
		}
		if _, err := cfe.ParseDate(fecha); err != nil {
			return nil, cfe.Errorf(cfe.EINVALID, "%s, línea %d: la fecha %q no es AAAA-MM-DD ni DD/MM/AAAA", source, line, rec[0])
		}
		out = append(out, apitype.RateQuote{Fecha: fecha, Moneda: strings.ToUpper(strings.TrimSpace(rec[1])),
			Valor: strings.TrimSpace(rec[2]), Origen: fmt.Sprintf("archivo %s, línea %d", source, line)})
	}
	if len(out) == 0 {
		return nil, cfe.Errorf(cfe.EINVALID, "%s no tiene cotizaciones", source)
	}
	return out, nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
