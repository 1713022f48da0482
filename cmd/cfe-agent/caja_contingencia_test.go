package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
)

// TestCaja_browserContingencia drives the /caja page's "Contingencia" tab
// in headless Chromium at 390 px over the real agent: a 201 form from
// yesterday, keyed in with its serie, number, date and the supervisor's
// PIN, is signed with that number and found by it afterwards, and nothing
// is printed; a form whose number is outside the ranges shows the field's
// Spanish error and uses nothing of the 201 range; no CSP violation and no
// sideways scroll.
func TestCaja_browserContingencia(t *testing.T) {
	testtool.Require(t, "chromium")
	t.Parallel()
	a, pr := startCajaAgent(t, true)

	type caeState struct {
		CAE []struct {
			TipoCFE cfe.Type `json:"tipo_cfe"`
			Ranges  []struct {
				Serie string `json:"serie"`
				Desde int64  `json:"desde"`
				Hasta int64  `json:"hasta"`
				Used  int64  `json:"used"`
			} `json:"ranges"`
		} `json:"cae"`
	}
	state := func() caeState {
		t.Helper()
		_, b := getAccept(t, a.baseURL+"/state", "application/json")
		var st caeState
		if err := json.Unmarshal(b, &st); err != nil {
			t.Fatalf("/state: %v: %s", err, b)
		}
		return st
	}
	used201 := func() int64 {
		t.Helper()
		var n int64
		for _, c := range state().CAE {
			if c.TipoCFE == 201 {
				for _, r := range c.Ranges {
					n += r.Used
				}
			}
		}
		return n
	}
	var serie string
	var desde, hasta int64
	for _, c := range state().CAE {
		if c.TipoCFE == 201 && len(c.Ranges) > 0 {
			serie, desde, hasta = c.Ranges[0].Serie, c.Ranges[0].Desde, c.Ranges[0].Hasta
		}
	}
	if serie == "" || hasta < desde+10 {
		t.Fatalf("no e-Ticket Contingencia range in /state's cae")
	}
	nro := desde + 3
	yesterday := time.Now().In(cfe.Montevideo).AddDate(0, 0, -1).Format("02/01/2006")

	ctx, facts := cajaBrowser(t)
	var cspRegistered page.ScriptIdentifier
	err := chromedp.Run(ctx,
		chromedp.EmulateViewport(390, 844),
		chromedp.ActionFunc(func(ctx context.Context) error {
			var err error
			cspRegistered, err = page.AddScriptToEvaluateOnNewDocument(watchCSP).Do(ctx)
			return err
		}),
		chromedp.Navigate(a.baseURL+"/caja"),
		chromedp.WaitVisible(`#resumen:not(:empty)`, chromedp.ByQuery),
	)
	if err != nil || cspRegistered == "" {
		t.Fatalf("loading /caja: %v\n%s", err, a.logs)
	}
	// keyIn fills the contingency form and submits it; it returns the
	// page's answer.
	keyIn := func(step string, numero int64) cajaFacts {
		t.Helper()
		err := chromedp.Run(ctx,
			chromedp.Click(`#pestanas button[data-pestana=contingencia]`, chromedp.ByQuery),
			chromedp.WaitVisible(`#formulario`, chromedp.ByID),
			chromedp.SetValue(`#formventa [name=f-tipo]`, "201", chromedp.ByQuery),
			chromedp.SetValue(`#formventa [name=f-serie]`, serie, chromedp.ByQuery),
			chromedp.SetValue(`#formventa [name=f-numero]`, fmt.Sprint(numero), chromedp.ByQuery),
			chromedp.SetValue(`#formventa [name=f-fecha]`, yesterday, chromedp.ByQuery),
			chromedp.SetValue(`#formventa [name=f-pin]`, cajaPIN, chromedp.ByQuery),
			chromedp.SetValue(`#lineas [name=l-nombre]`, "Yerba en paquete", chromedp.ByQuery),
			chromedp.SetValue(`#lineas [name=l-cantidad]`, "1", chromedp.ByQuery),
			chromedp.SetValue(`#lineas [name=l-precio]`, "122", chromedp.ByQuery),
			chromedp.Evaluate(`document.getElementById("mensaje").className = "message"`, nil),
			chromedp.Click(`#emitir`, chromedp.ByID),
			chromedp.WaitVisible(`#mensaje.ok, #mensaje.error`, chromedp.ByQuery))
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		return facts(step)
	}

	// Refused: a number outside the ranges names the field and uses nothing.
	before, printed := used201(), len(pr.Received())
	f := keyIn("outside the ranges", hasta+1)
	if f.MessageOK || !strings.Contains(f.Message, "cfe.idDoc.numero") || !strings.Contains(f.Message, "no está en los rangos CAE") {
		t.Fatalf("a number outside the ranges: %q", f.Message)
	}
	if after := used201(); after != before {
		t.Errorf("a refused form changed the 201 range's use: %d → %d", before, after)
	}
	if got := getCaja[apitype.Comprobantes](t, a.baseURL+fmt.Sprintf("/comprobantes?tipo=201&numero=%d", hasta+1)); got.Total != 0 {
		t.Errorf("a refused form was stored: %+v", got)
	}

	// Keyed in: signed with the form's serie and number, found by it.
	f = keyIn("keyed in", nro)
	want := fmt.Sprintf("(%s-%d)", serie, nro)
	if !f.MessageOK || !strings.HasPrefix(f.Message, "Formulario ingresado: ") || !strings.Contains(f.Message, want) {
		t.Fatalf("keying in %s-%d: %q\n%s", serie, nro, f.Message, a.logs)
	}
	if after := used201(); after != before+1 {
		t.Errorf("the 201 range's use %d after one form keyed in, want %d", after, before+1)
	}
	f = func() cajaFacts {
		js := fmt.Sprintf(`(() => { document.querySelector("#pestanas button[data-pestana=buscar]").click();
		  const f = document.getElementById("busqueda"); f.reset(); document.getElementById("resumen").textContent = "";
		  f.elements.numero.value = %q; f.elements.serie.value = %q; f.requestSubmit(); })()`, fmt.Sprint(nro), serie)
		if err := chromedp.Run(ctx, chromedp.Evaluate(js, nil), chromedp.WaitVisible(`#resumen:not(:empty)`, chromedp.ByQuery)); err != nil {
			t.Fatal(err)
		}
		return facts("search the form")
	}()
	if len(f.Names) != 1 || !strings.HasSuffix(f.Names[0], fmt.Sprintf(" %s-%d", serie, nro)) || f.Totals[0] != "$ 122,00" {
		t.Fatalf("searching the keyed-in form: %q %q (%s)", f.Names, f.Totals, f.Summary)
	}
	found := getCaja[apitype.Comprobantes](t, a.baseURL+fmt.Sprintf("/comprobantes?tipo=201&serie=%s&numero=%d", serie, nro))
	if found.Total != 1 || found.Comprobantes[0].TipoCFE != 201 {
		t.Fatalf("/comprobantes for the form: %+v", found)
	}
	doc, err := cfe.ParseXML(xmlOf(t, a.baseURL, found.Comprobantes[0].UUID))
	if err != nil {
		t.Fatal(err)
	}
	if doc.IdDoc.Nro != nro || doc.IdDoc.Serie != serie || doc.IdDoc.FchEmis.String() != cfe.DateOf(time.Now().In(cfe.Montevideo).AddDate(0, 0, -1)).String() {
		t.Errorf("the signed form: %s-%d of %s", doc.IdDoc.Serie, doc.IdDoc.Nro, doc.IdDoc.FchEmis)
	}
	if got := len(pr.Received()); got != printed {
		t.Errorf("keying in printed %d bytes; a form is never printed", got-printed)
	}
}
