package sandbox_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/sandbox"
	"github.com/cfe-agent/cfe-agent/sandbox/dgi/emulator"
	"github.com/cfe-agent/cfe-agent/sandbox/issuing"
	"github.com/cfe-agent/cfe-agent/signer"
)

// withDGI runs the provider's sending against an in-process emulator that
// answers at once, on the real clock (DGI's Fechahora is the emulator's).
func withDGI(c *sandbox.Config) {
	c.Now = time.Now
	c.DGI = sandbox.DGIConfig{Enabled: true, Processing: -1, Poll: 20 * time.Millisecond, Retry: 50 * time.Millisecond}
}

// TestProvider_SendsToDGI: what the sandbox holds (an agent's deliveries,
// its own emitir and anular) reaches the emulator as the provider's envelopes, and
// cfeemitido/{id} and buscar show DGI's verdicts with DGI's codes: AE, and
// BE with the code the emulator was told to reject with. marcar-aceptado
// keeps its meaning for an AE and is refused for a BE.
func TestProvider_SendsToDGI(t *testing.T) {
	t.Parallel()
	e := start(t, withDGI)
	emu := e.srv.DGIEmulator()
	if emu == nil {
		t.Fatal("no in-process DGI emulator")
	}
	if err := emu.Reject(emulator.Rejection{TipoCFE: cfe.ETicket, Serie: "A", Nro: 2, Codigo: "E05", Detalle: "rechazo elegido"}); err != nil {
		t.Fatal(err)
	}
	agent := agentSigner(t)
	signedAt := time.Now().Add(-time.Hour).In(cfe.Montevideo).Truncate(time.Second)
	var ids []int64
	// The agent's CAE: the sandbox profile's generated range (DGI's
	// emulator knows those).
	var cae cfe.CAEData
	for _, r := range signer.SandboxRanges(rucAlfa, cfe.DateOf(signedAt)) {
		if r.Type == cfe.ETicket {
			cae = cfe.CAEData{CAEID: r.CAEID, DNro: r.DNro, HNro: r.HNro, FecVenc: r.Vencimiento}
		}
	}
	for nro := int64(1); nro <= 2; nro++ {
		doc := ticket(nro, signedAt)
		doc.CAEData = cae
		signed := sign(t, agent, doc)
		req := issuing.ReceiveRequest{UUID: fmt.Sprintf("9b1f0b8e-0000-4000-8000-00000000000%d", nro), XmlFirmado: string(signed.XML)}
		var got issuing.ComprobanteResponse
		e.do("POST", "/api/v1/comprobante/recibirFirmado", req, "X-API-Key", keyAlfa).expect(t, http.StatusOK).decode(t, &got)
		ids = append(ids, got.ID)
	}
	ids = append(ids, e.emit(ticketRequest("4c1e0000-0000-4000-8000-000000000001")).ID)
	// Its own anular: the credit note of its e-Ticket.
	note, _ := e.annulOK(ids[2], cfe.DateOf(time.Now().In(cfe.Montevideo)).String())
	ids = append(ids, note.ID)

	// Reads with a JWT: no key's rate limit counts them.
	jwt := bearer(e.login("ana", anaPassword).Token)
	detail := func(id int64) issuing.IssuedDetail {
		var d issuing.IssuedDetail
		e.do("GET", fmt.Sprintf("/api/v1/cfeemitido/%d", id), nil, jwt...).expect(t, http.StatusOK).decode(t, &d)
		return d
	}
	want := map[int64]string{ids[0]: "AE", ids[1]: "BE", ids[2]: "AE", ids[3]: "AE"}
	if !testtool.WaitUntil(t, 30*time.Second, func() bool {
		for id, code := range want {
			if detail(id).EstadoDgi != code {
				return false
			}
		}
		return true
	}) {
		for _, id := range ids {
			d := detail(id)
			t.Errorf("CFE %d: estadoDgi %q %+v; provider: %s", id, d.EstadoDgi, d.MotivosDgi, e.srv.DGIProvider().LastError(d.IdEmpresa))
		}
		t.FailNow()
	}
	be := detail(ids[1])
	if len(be.MotivosDgi) != 1 || be.MotivosDgi[0].Codigo != "E05" || be.FechaEstadoDgi == nil {
		t.Errorf("the BE's reasons: %+v at %v", be.MotivosDgi, be.FechaEstadoDgi)
	}
	if ae := detail(ids[0]); ae.Estado != "aceptado" || ae.AceptadoEn == nil || len(ae.MotivosDgi) != 0 {
		t.Errorf("DGI's AE leaves estado %q aceptadoEn %v motivos %+v", ae.Estado, ae.AceptadoEn, ae.MotivosDgi)
	}
	if be.Estado != "emitido" {
		t.Errorf("a BE has estado %q", be.Estado)
	}

	t.Run("buscar shows the same states", func(t *testing.T) {
		var list []issuing.IssuedSummary
		e.do("GET", "/api/v1/cfeemitido/buscar", nil, jwt...).expect(t, http.StatusOK).decode(t, &list)
		got := map[int64]string{}
		for _, s := range list {
			got[s.ID] = s.EstadoDgi
		}
		for id, code := range want {
			if got[id] != code {
				t.Errorf("buscar: CFE %d estadoDgi %q, want %q", id, got[id], code)
			}
		}
	})
	t.Run("marcar-aceptado", func(t *testing.T) {
		rej := e.do("POST", fmt.Sprintf("/api/v1/cfeemitido/%d/marcar-aceptado", ids[1]), nil, "X-API-Key", keyAlfa).expect(t, http.StatusConflict).errBody(t)
		if rej.Error == "" {
			t.Error("no message for a BE marked accepted")
		}
		var s issuing.IssuedSummary
		e.do("POST", fmt.Sprintf("/api/v1/cfeemitido/%d/marcar-aceptado", ids[0]), nil, "X-API-Key", keyAlfa).expect(t, http.StatusOK).decode(t, &s)
		if s.Estado != "aceptado" || s.EstadoDgi != "AE" {
			t.Errorf("marked: estado %q estadoDgi %q", s.Estado, s.EstadoDgi)
		}
	})
	t.Run("one envelope per CFE at DGI", func(t *testing.T) {
		counts, err := emu.Counts()
		if err != nil {
			t.Fatal(err)
		}
		if len(counts) != len(want) {
			t.Errorf("the emulator holds %d CFEs, want %d: %+v", len(counts), len(want), counts)
		}
		for _, c := range counts {
			if c.Sobres != 1 {
				t.Errorf("%+v went in %d envelopes", c, c.Sobres)
			}
		}
	})
}

// TestProvider_DroppedAnswer: the emulator drops the connection after
// recording the provider's envelope (the "unknown" outcome); the provider
// asks DGI before sending anything again, finds it received, and reads its
// verdict: the CFE reached DGI in exactly one envelope.
func TestProvider_DroppedAnswer(t *testing.T) {
	t.Parallel()
	e := start(t, withDGI)
	emu := e.srv.DGIEmulator()
	emu.DropAfterReceipt(1)
	id := e.emit(ticketRequest("4c1e0000-0000-4000-8000-0000000000d1")).ID
	jwt := bearer(e.login("ana", anaPassword).Token)
	var d issuing.IssuedDetail
	if !testtool.WaitUntil(t, 30*time.Second, func() bool {
		d = issuing.IssuedDetail{}
		e.do("GET", fmt.Sprintf("/api/v1/cfeemitido/%d", id), nil, jwt...).expect(t, http.StatusOK).decode(t, &d)
		return d.EstadoDgi == "AE"
	}) {
		t.Fatalf("estadoDgi %q; provider: %s", d.EstadoDgi, e.srv.DGIProvider().LastError(d.IdEmpresa))
	}
	counts, err := emu.Counts()
	if err != nil {
		t.Fatal(err)
	}
	if len(counts) != 1 || counts[0].Sobres != 1 {
		t.Fatalf("the emulator's counts %+v: want one CFE in exactly one envelope", counts)
	}
	if n, err := emu.EnvelopeCount(); err != nil || n != 1 {
		t.Fatalf("the emulator received %d envelopes (%v), want 1", n, err)
	}
}
