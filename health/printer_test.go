package health

import (
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
)

// TestAddPrinter: a default printer that cannot print degrades the status
// (the agent still signs) with a warning naming it, the reason and when;
// one that can changes nothing; the report carries what was learned.
func TestAddPrinter(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 28, 13, 5, 0, 0, time.UTC) // 10:05 in Montevideo
	cases := []struct {
		p       *Printer
		status  string
		warning string
		source  string
	}{
		{nil, apitype.HealthOK, "", ""},
		{&Printer{Alias: "termica", OK: true, At: at}, apitype.HealthOK, "", apitype.PrinterCheckIdle},
		{&Printer{Alias: "termica", Reason: "la impresora en 10.0.0.9:9100 no tiene papel", At: at}, apitype.HealthDegraded,
			"la impresora predeterminada «termica» no está lista: la impresora en 10.0.0.9:9100 no tiene papel (consultada a las 10:05)",
			apitype.PrinterCheckIdle},
		{&Printer{Alias: "termica", Reason: "no se pudo conectar con la impresora en 10.0.0.9:9100", At: at, ByJob: true},
			apitype.HealthDegraded,
			"la impresora predeterminada «termica» no imprimió el último comprobante (10:05): no se pudo conectar con la impresora en 10.0.0.9:9100",
			apitype.PrinterCheckJob},
	}
	for i, c := range cases {
		rep := &apitype.StateReport{HealthReport: apitype.HealthReport{Status: apitype.HealthOK}}
		addPrinter(rep, c.p)
		if rep.Status != c.status {
			t.Errorf("%d: status %s, want %s", i, rep.Status, c.status)
		}
		if (c.warning == "") != (len(rep.Warnings) == 0) || (c.warning != "" && rep.Warnings[0] != c.warning) {
			t.Errorf("%d: warnings %q, want %q", i, rep.Warnings, c.warning)
		}
		if c.p == nil {
			if rep.Printer != nil {
				t.Errorf("%d: printer %+v without a check", i, rep.Printer)
			}
			continue
		}
		if rep.Printer == nil || rep.Printer.Alias != "termica" || rep.Printer.Source != c.source ||
			!rep.Printer.At.Equal(at) || rep.Printer.At.Location() != cfe.Montevideo || rep.Printer.OK != c.p.OK {
			t.Errorf("%d: printer %+v", i, rep.Printer)
		}
	}
}
