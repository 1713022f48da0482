package app

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/dgisend"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
)

// resendTimeout bounds "cfe-agent reporte reenviar" through the running
// agent (it builds and signs the day's report).
const resendTimeout = 5 * time.Minute

// ResendReport implements localapi.ReportResends (POST /reporte/reenviar):
// the running agent's reporter records the day's corrected report and
// sends it.
func (f *Facade) ResendReport(ctx context.Context, req apitype.ReportResendRequest) (*apitype.ReportResendResult, error) {
	d, err := resendDate(req.Fecha)
	if err != nil {
		return nil, err
	}
	r := f.a.Reporter
	if r == nil {
		why := "este agente no envía reportes diarios a DGI"
		switch {
		case !f.a.Profile.DGI.Direct():
			why += ": el perfil está en modo proveedor (el servicio en la nube envía el reporte)"
		case f.a.ReportError != "":
			why += ": " + f.a.ReportError
		case f.a.DGIError != "":
			why += ": " + f.a.DGIError
		}
		return nil, cfe.Errorf(cfe.EUNAVAILABLE, "%s", why)
	}
	rep, err := r.Resend(ctx, d)
	if err != nil {
		return nil, err
	}
	return &apitype.ReportResendResult{Fecha: rep.Date, SecEnvio: rep.Seq}, nil
}

func resendDate(s string) (cfe.Date, error) {
	d, err := cfe.ParseDate(s)
	if err != nil {
		return cfe.Date{}, &cfe.Error{Code: cfe.EINVALID, Message: err.Error(), Fields: []cfe.FieldError{{Campo: "fecha", Mensaje: err.Error()}}}
	}
	return d, nil
}

// ResendReport is "cfe-agent reporte reenviar --fecha D": the day's report
// to DGI built again with SecEnvio + 1 and recorded, through the running
// agent when there is one (which sends it at once, running true), else in
// the store directly (the agent sends it when it starts).
func ResendReport(ctx context.Context, opts Options, fecha string, log *slog.Logger) (*apitype.ReportResendResult, bool, error) {
	d, err := resendDate(fecha)
	if err != nil {
		return nil, false, err
	}
	dataDir, cfg, _, err := LoadConfig(opts)
	if err != nil {
		return nil, false, err
	}
	c, info, ok, err := adminClient(dataDir, cfg, resendTimeout)
	if err != nil {
		return nil, false, err
	}
	if ok {
		res, err := c.ResendReport(ctx, apitype.ReportResendRequest{Fecha: d.String()})
		switch {
		case err == nil:
			return res, true, nil
		case !agentGone(err):
			return nil, true, &cfe.Error{Code: cfe.ErrorCode(err), Err: err,
				Message: fmt.Sprintf("el agente en ejecución (%s) no reenvió el reporte: %s", info.BaseURL, cfe.ErrorMessage(err))}
		}
	}
	a, err := Open(ctx, opts, log)
	if err != nil {
		return nil, false, err
	}
	defer a.Close()
	if !a.Profile.DGI.Direct() {
		return nil, false, cfe.Errorf(cfe.EINVALID, "el perfil %s está en modo proveedor: el servicio en la nube envía el reporte diario a DGI", a.Name)
	}
	rcfg, _, err := reporterConfig(a)
	if err != nil {
		return nil, false, err
	}
	if rcfg.Build, err = a.signedReport(); err != nil {
		return nil, false, err
	}
	rep, err := dgisend.NewReporter(rcfg).Resend(ctx, d)
	if err != nil {
		return nil, false, err
	}
	return &apitype.ReportResendResult{OK: true, Fecha: rep.Date, SecEnvio: rep.Seq}, false, nil
}

// WriteReportResent writes the technician's report of a resend.
func WriteReportResent(w io.Writer, res *apitype.ReportResendResult, running bool) {
	fmt.Fprintf(w, "reporte diario del %s guardado con secuencia %d\n", res.Fecha, res.SecEnvio)
	if running {
		fmt.Fprintln(w, "el agente lo envía a DGI ahora; cuando DGI lo reciba, el anterior queda reemplazado (FR)")
	} else {
		fmt.Fprintln(w, "el agente lo envía a DGI cuando se inicie; cuando DGI lo reciba, el anterior queda reemplazado (FR)")
	}
}
