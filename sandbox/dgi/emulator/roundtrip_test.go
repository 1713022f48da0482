package emulator

import (
	"errors"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/dgi"
)

// The client sends an envelope of CFEs the real issuer signed from the
// sandbox's CAE ranges: ACKSobre AS with Token and Fechahora; the verdict
// is refused before Fechahora (105) and answered after it: every CFE AE,
// with the counters.
func TestEmulator_envelopeReceivedThenVerdictAfterFechahora(t *testing.T) {
	t.Parallel()
	f := getFixture(t)
	e := startEmulator(t, "", Config{Processing: 10 * time.Second})
	c := client(t, e, nil, 0)
	env := f.envelope(t, 1, f.issued[101], f.issued[111], f.issued[181])
	ack, err := c.SendEnvelope(ctx(t), env)
	if err != nil {
		t.Fatal(err)
	}
	if ack.Estado != dgi.EnvelopeReceived || ack.Token == "" || ack.IDReceptor <= 0 || ack.IDEmisor != 1 || ack.CantidadCFE != 3 ||
		ack.RUCEmisor != company.RUCEmisor || ack.RUCReceptor != cfe.RUCDGI || !ack.Fechahora.After(ack.FecHRecibido) {
		t.Fatalf("ACKSobre %+v", ack)
	}
	_, err = c.EnvelopeStatus(ctx(t), ack.IDReceptor, ack.Token)
	if !errors.Is(err, dgi.ErrNotProcessed) || cfe.ErrorCode(err) != cfe.EUNAVAILABLE {
		t.Fatalf("before Fechahora: %v, want ErrNotProcessed", err)
	}
	if err := e.Advance(11 * time.Second); err != nil {
		t.Fatal(err)
	}
	acks, err := c.EnvelopeStatus(ctx(t), ack.IDReceptor, ack.Token)
	if err != nil {
		t.Fatal(err)
	}
	if acks.CantenSobre != 3 || acks.CantResponden != 3 || acks.CantCFEAceptados != 3 || acks.CantCFERechazados != 0 || len(acks.CFEs) != 3 {
		t.Fatalf("ACKCFE %+v", acks)
	}
	for i, v := range acks.CFEs {
		if v.Estado != dgi.CFEReceived || v.Ordinal != i+1 || v.Nro != 1 || len(v.Motivos) != 0 {
			t.Errorf("CFE %d: %+v", i+1, v)
		}
	}
}
