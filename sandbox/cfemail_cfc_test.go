package sandbox_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	cfemail "github.com/cfe-agent/cfe-agent/sandbox/mail"
)

// TestMailCFE_contingencyRefused: a contingency receipt (2xx) delivered by
// an agent is never e-mailed to the receiver (DGI: a CFC goes to DGI only;
// the paper form was the customer's document); its electronic sibling is.
func TestMailCFE_contingencyRefused(t *testing.T) {
	t.Parallel()
	e := start(t)
	agent := agentSigner(t)
	at := t0.Add(-time.Hour).In(cfe.Montevideo).Truncate(time.Second)
	paper := ticket(8, at)
	paper.IdDoc.TipoCFE = 201
	id := e.deliver("cfc-8", sign(t, agent, paper).XML)
	var body map[string]any
	e.do("POST", "/api/v1/cfeemitido/enviarPdfPorCorreo", cfemail.SendRequest{IdCfe: id, Destinatarios: []string{"uno@cliente.test"}}, "X-API-Key", keyAlfa).
		expect(t, http.StatusBadRequest).decode(t, &body)
	if msg, _ := body["error"].(string); !strings.Contains(msg, "se envía a DGI y no al receptor") {
		t.Errorf("refusal %v", body)
	}
}
