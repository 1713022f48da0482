package app

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
	"github.com/cfe-agent/cfe-agent/profiles"
	"github.com/cfe-agent/cfe-agent/sandbox/dgi/emulator"
)

// startDGIEmulator serves DGI's services emulated on loopback, answering
// verdicts at once.
func startDGIEmulator(t *testing.T) *emulator.Emulator {
	t.Helper()
	em, err := emulator.New(emulator.Config{DataDir: t.TempDir(), Listen: "127.0.0.1:0", AdminListen: "127.0.0.1:0", Processing: -1})
	if err != nil {
		t.Fatal(err)
	}
	if err := em.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = em.Close() })
	return em
}

// directAgent is a test agent in direct mode toward em, its dgi block as
// a profile holds it (the emulator's certificate as PEM text).
func directAgent(t *testing.T, em *emulator.Emulator, edit func(d *profiles.DGI)) *Agent {
	t.Helper()
	return newTestAgent(t, func(p *profiles.Profile) {
		p.DGI = profiles.DGI{Modo: profiles.DGIDirect, URLRecepcion: em.URL() + "/ePrueba/ws_eprueba",
			URLConsultas: em.URL() + "/ePrueba/ws_consultasPrueba",
			Certificado:  string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: em.Certificate().Raw}))}
		if edit != nil {
			edit(&p.DGI)
		}
	})
}

// runSender starts the agent's direct-mode sender as a serving agent does,
// woken by the store's commits, until the test ends.
func runSender(t *testing.T, a *Agent) {
	t.Helper()
	wake, unwatch := a.DB.WatchCommits()
	s := newDGISender(context.Background(), a, wake)
	if s == nil {
		t.Fatalf("newDGISender = nil: %s", a.DGIError)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx); unwatch(); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
}

func reportOf(t *testing.T, a *Agent) *apitype.StateReport {
	t.Helper()
	rep, err := NewFacade(a, FacadeConfig{Zone: montevideo}).Report(context.Background(), true)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestDGI_DirectModeState: in direct mode the signed CFEs reach the DGI
// emulator; the one DGI rejects (its knob, code E05) reaches /state's dgi
// block (exactly its six names), and health is degraded naming the CFE, the
// code and what to do; the others are accepted.
func TestDGI_DirectModeState(t *testing.T) {
	t.Parallel()
	em := startDGIEmulator(t)
	a := directAgent(t, em, nil)
	runSender(t, a)
	if rep := reportOf(t, a); rep.DGI == nil || dgiCounts(rep.DGI) != dgiCounts(&apitype.DGIReport{}) {
		t.Fatalf("dgi block before signing: %+v", rep.DGI)
	}
	// DGI will reject the third e-Ticket.
	if err := em.Reject(emulator.Rejection{TipoCFE: cfe.ETicket, Serie: "A", Nro: 3, Codigo: "E05", Detalle: "monto mal calculado"}); err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		sign(t, a, fmt.Sprintf("dgi-%d", i), 100+i)
	}
	var rep *apitype.StateReport
	waitFor(t, "DGI's verdicts", func() bool {
		rep = reportOf(t, a)
		return rep.DGI != nil && rep.DGI.Aceptados+rep.DGI.Rechazados == 4
	})
	if want := (apitype.DGIReport{Enviados: 4, Aceptados: 3, Rechazados: 1}); dgiCounts(rep.DGI) != dgiCounts(&want) {
		t.Fatalf("dgi block = %+v, want %+v", *rep.DGI, want)
	}
	if rep.Status != apitype.HealthDegraded {
		t.Errorf("status %s with a CFE rejected by DGI, want degraded", rep.Status)
	}
	i := slices.IndexFunc(rep.Warnings, func(w string) bool { return strings.Contains(w, "e-Ticket A-3") })
	if i < 0 {
		t.Fatalf("no warning names the rejected CFE: %q", rep.Warnings)
	}
	for _, part := range []string{"DGI rechazó", "E05", "monto mal calculado", "anulado", "emita un comprobante nuevo"} {
		if !strings.Contains(rep.Warnings[i], part) {
			t.Errorf("warning %q lacks %q", rep.Warnings[i], part)
		}
	}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var raw struct {
		DGI map[string]any `json:"dgi"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range raw.DGI {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if want := []string{"aceptados", "desconocidos", "enviados", "observados", "pendientes", "rechazados"}; !slices.Equal(keys, want) {
		t.Errorf("/state's dgi block has %q, want exactly %q", keys, want)
	}
	// The rejected number is annulled and kept.
	rej, err := a.DB.DGIRejections(context.Background(), 5)
	if err != nil || len(rej) != 1 || rej[0].Nro != 3 {
		t.Fatalf("rejections = %+v, %v", rej, err)
	}
}

// TestDGI_UrgentNotReceived: an e-Factura (DGI must hold it before the
// goods leave) that DGI has not received within the profile's
// aviso_sin_recibir turns the state degraded with that reason; an e-Ticket
// below the cap does not.
func TestDGI_UrgentNotReceived(t *testing.T) {
	t.Parallel()
	em := startDGIEmulator(t)
	if err := em.SetUnreachable(true); err != nil {
		t.Fatal(err)
	}
	a := directAgent(t, em, func(d *profiles.DGI) { d.AvisoSinRecibir = time.Nanosecond })
	if _, err := a.DB.DGIBegin(context.Background()); err != nil {
		t.Fatal(err)
	}
	sign(t, a, "ticket-1", 100)
	rep := reportOf(t, a)
	if rep.DGI == nil || rep.DGI.Pendientes != 1 {
		t.Fatalf("dgi block = %+v", rep.DGI)
	}
	for _, w := range rep.Warnings {
		if strings.Contains(w, "antes de que salga la mercadería") {
			t.Fatalf("an e-Ticket below the cap is reported urgent: %q", w)
		}
	}
	b, err := os.ReadFile(filepath.Join("..", "examples", "e-factura.json"))
	if err != nil {
		t.Fatal(err)
	}
	req, err := cfe.DecodeRequest(strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Issuer.Issue(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	rep = reportOf(t, a)
	name := fmt.Sprintf("e-Factura %s-%d", res.Issued.Serie, res.Issued.Nro)
	i := slices.IndexFunc(rep.Warnings, func(w string) bool { return strings.Contains(w, "antes de que salga la mercadería") })
	if i < 0 || rep.Status != apitype.HealthDegraded {
		t.Fatalf("status %s, warnings %q: want degraded for the e-Factura DGI has not received", rep.Status, rep.Warnings)
	}
	if !strings.Contains(rep.Warnings[i], name) || !strings.Contains(rep.Warnings[i], "1 comprobante que DGI debe recibir") {
		t.Errorf("warning %q does not name %s alone", rep.Warnings[i], name)
	}
}

// TestDGI_SenderCannotStart: direct mode whose client cannot be made (here
// a plain-http URL to another host, which the dgi client refuses) does not
// stop the agent from signing: the CFEs stay pending and the state says why
// nothing reaches DGI.
func TestDGI_SenderCannotStart(t *testing.T) {
	t.Parallel()
	em := startDGIEmulator(t)
	a := directAgent(t, em, func(d *profiles.DGI) { d.URLRecepcion = "http://dgi.example.com/ePrueba/ws_eprueba" })
	wake, unwatch := a.DB.WatchCommits()
	defer unwatch()
	if s := newDGISender(context.Background(), a, wake); s != nil || !strings.Contains(a.DGIError, "url_recepcion") {
		t.Fatalf("newDGISender = %v, error %q: want none, naming url_recepcion", s, a.DGIError)
	}
	sign(t, a, "sin-dgi", 100)
	rep := reportOf(t, a)
	if rep.DGI == nil || dgiCounts(rep.DGI) != dgiCounts(&apitype.DGIReport{Pendientes: 1}) {
		t.Fatalf("dgi block = %+v", rep.DGI)
	}
	i := slices.IndexFunc(rep.Warnings, func(w string) bool { return strings.HasPrefix(w, "no se envían comprobantes a DGI: ") })
	if i < 0 || rep.Status != apitype.HealthDegraded || !strings.Contains(rep.Warnings[i], "url_recepcion") {
		t.Fatalf("status %s, warnings %q: want degraded saying why nothing reaches DGI", rep.Status, rep.Warnings)
	}
}

// dgiCounts is the dgi block's counts alone (without the daily reports).
func dgiCounts(d *apitype.DGIReport) [6]int {
	return [6]int{d.Enviados, d.Aceptados, d.Rechazados, d.Observados, d.Pendientes, d.Desconocidos}
}

// TestDGIState_annulledRefused: in provider mode, annulled numbers the
// hosted service refused for good reach the state (health warns of them);
// those it took do not.
func TestDGIState_annulledRefused(t *testing.T) {
	t.Parallel()
	a := newTestAgent(t, nil)
	ctx := context.Background()
	sign(t, a, "anul-1", 100)
	last := a.DB.LastNumber(cfe.ETicket, "A")
	refused := cfe.AnnulledRange{Type: cfe.ETicket, Serie: "A", From: last + 2, To: last + 3, Note: "rollo dañado"}
	taken := cfe.AnnulledRange{Type: cfe.ETicket, Serie: "A", From: last + 5, To: last + 5, Note: "rollo dañado"}
	for _, r := range []cfe.AnnulledRange{refused, taken} {
		if err := a.DB.AnnulNumbers(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	pending, err := a.DB.AnnulledUndelivered(ctx, cfe.DateOf(time.Now().In(cfe.Montevideo)), 10)
	if err != nil || len(pending) != 2 {
		t.Fatalf("pending annulled ranges: %v, %v", pending, err)
	}
	if err := a.DB.MarkAnnulledRefused(ctx, pending[0], "se superponen con un comprobante"); err != nil {
		t.Fatal(err)
	}
	if err := a.DB.MarkAnnulledDelivered(ctx, pending[1]); err != nil {
		t.Fatal(err)
	}
	st, err := dgiState(ctx, a, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if st == nil || len(st.AnnulledRefused) != 1 || st.AnnulledRefused[0].Range.From != refused.From ||
		st.AnnulledRefused[0].Reason != "se superponen con un comprobante" {
		t.Fatalf("the state's refused annulled numbers: %+v", st)
	}
}
