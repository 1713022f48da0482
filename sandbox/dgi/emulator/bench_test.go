package emulator

import (
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/dgi"
	"github.com/cfe-agent/cfe-agent/signer"
)

// envelope250 returns 250 distinct CFEs signed by the company.
func envelope250(b *testing.B, f *fixture) []cfe.EnvelopeCFE {
	out := make([]cfe.EnvelopeCFE, 250)
	for i := range out {
		out[i] = cfe.EnvelopeCFE{XML: f.sign(b, 101, int64(1000+i), nil, nil)}
	}
	return out
}

// BenchmarkEnvelope250_buildAndSign: an envelope of 250 signed CFEs, from
// its prepared Caratula to the signed SOAP request (cfe.BuildEnvelope, then
// dgi.SignRequest: the Body's canonical form and digest, the WS-Security
// signature).
func BenchmarkEnvelope250_buildAndSign(b *testing.B) {
	f := getFixture(b)
	env, err := signer.PrepareEnvelope(signer.EnvelopeRequest{Kind: cfe.EnvelopeDGI, RutReceptor: cfe.RUCDGI, IdEmisor: 1, Fecha: f.at, CFEs: envelope250(b, f)})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		x, err := cfe.BuildEnvelope(env)
		if err != nil {
			b.Fatal(err)
		}
		req, err := dgi.SignRequest(dgi.OpSendEnvelope, f.creds, x)
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(req)))
	}
}

// BenchmarkEnvelope250_prepare: signer.PrepareEnvelope, which verifies the
// signature of each of the 250 CFEs and that one certificate signed them all
// (what an outbox does once per envelope before building it).
func BenchmarkEnvelope250_prepare(b *testing.B) {
	f := getFixture(b)
	cfes := envelope250(b, f)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := signer.PrepareEnvelope(signer.EnvelopeRequest{Kind: cfe.EnvelopeDGI, RutReceptor: cfe.RUCDGI, IdEmisor: 1, Fecha: f.at, CFEs: cfes}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRoundTrip: the client against the emulator over loopback HTTP,
// both sides signing and verifying: an envelope of one CFE
// (EFACRECEPCIONSOBRE, the emulator judging the CFE and recording it) and a
// query (EFACCONSULTARESTADOCFE).
func BenchmarkRoundTrip(b *testing.B) {
	f := getFixture(b)
	e := startEmulator(b, "", Config{Processing: -1})
	c := client(b, e, nil, time.Minute)
	doc := f.issued[101]
	b.Run("envelope1", func(b *testing.B) {
		id := int64(100)
		for b.Loop() {
			b.StopTimer()
			id++
			env := rawEnvelope(company.RUCEmisor, cfe.RUCDGI, id, 1, f.creds.Certificate.Raw, f.at, doc)
			b.StartTimer()
			if _, err := c.SendEnvelope(ctx(b), env); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("query", func(b *testing.B) {
		for b.Loop() {
			if _, err := c.CFEState(ctx(b), dgi.CFEQuery{Tipo: 101, Serie: "A", Nro: 1}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkEnvelope250_signRequest: dgi.SignRequest alone over a built
// envelope of 250 CFEs.
func BenchmarkEnvelope250_signRequest(b *testing.B) {
	f := getFixture(b)
	x, err := signer.MakeEnvelope(signer.EnvelopeRequest{Kind: cfe.EnvelopeDGI, RutReceptor: cfe.RUCDGI, IdEmisor: 1, Fecha: f.at, CFEs: envelope250(b, f)})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(x)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := dgi.SignRequest(dgi.OpSendEnvelope, f.creds, x); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEnvelope250_sender: what dgisend's sender does with 250 stored
// CFEs before they leave, without the store and the network: it checks them
// (signer.PrepareEnvelope: every signature verified, one certificate), reads
// and checks them for the envelope once (cfe.CheckEnvelope), writes the
// envelope to learn its size and again once the store has numbered it
// (Build), and the client signs the SOAP request (dgi.SignRequest).
func BenchmarkEnvelope250_sender(b *testing.B) {
	f := getFixture(b)
	cfes := envelope250(b, f)
	b.ReportAllocs()
	for b.Loop() {
		env, err := signer.PrepareEnvelope(signer.EnvelopeRequest{Kind: cfe.EnvelopeDGI, RutReceptor: cfe.RUCDGI, Fecha: f.at, CFEs: cfes})
		if err != nil {
			b.Fatal(err)
		}
		env.Caratula.IdEmisor = 1
		checked, err := cfe.CheckEnvelope(env)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := checked.Build(1, f.at); err != nil {
			b.Fatal(err)
		}
		x, err := checked.Build(2, f.at)
		if err != nil {
			b.Fatal(err)
		}
		req, err := dgi.SignRequest(dgi.OpSendEnvelope, f.creds, x)
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(req)))
	}
}

// BenchmarkEnvelope250_build: cfe.BuildEnvelope alone, from a prepared
// Caratula: each CFE's head read, the rules checked, the envelope written.
func BenchmarkEnvelope250_build(b *testing.B) {
	f := getFixture(b)
	env, err := signer.PrepareEnvelope(signer.EnvelopeRequest{Kind: cfe.EnvelopeDGI, RutReceptor: cfe.RUCDGI, IdEmisor: 1, Fecha: f.at, CFEs: envelope250(b, f)})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		x, err := cfe.BuildEnvelope(env)
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(x)))
	}
}

// BenchmarkEnvelope250_senderVerified: BenchmarkEnvelope250_sender when the
// sender verified the 250 CFEs ahead, while it waited (dgisend's
// verifyAhead): PrepareEnvelope finds each CFE by its bytes' SHA-256.
func BenchmarkEnvelope250_senderVerified(b *testing.B) {
	f := getFixture(b)
	cfes := envelope250(b, f)
	verified := signer.NewVerifiedCFEs(0)
	if _, err := signer.PrepareEnvelope(signer.EnvelopeRequest{Kind: cfe.EnvelopeDGI, RutReceptor: cfe.RUCDGI, CFEs: cfes, Verified: verified}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		env, err := signer.PrepareEnvelope(signer.EnvelopeRequest{Kind: cfe.EnvelopeDGI, RutReceptor: cfe.RUCDGI, Fecha: f.at, CFEs: cfes, Verified: verified})
		if err != nil {
			b.Fatal(err)
		}
		env.Caratula.IdEmisor = 1
		checked, err := cfe.CheckEnvelope(env)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := checked.Build(1, f.at); err != nil {
			b.Fatal(err)
		}
		x, err := checked.Build(2, f.at)
		if err != nil {
			b.Fatal(err)
		}
		req, err := dgi.SignRequest(dgi.OpSendEnvelope, f.creds, x)
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(req)))
	}
}
