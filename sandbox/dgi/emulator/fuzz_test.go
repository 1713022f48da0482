package emulator

import (
	"testing"
)

// FuzzCheckEnvelope: the emulator's reading of an envelope (the request's
// untrusted document) takes any bytes without panicking, and a readable
// envelope's CFEs are slices of the input.
func FuzzCheckEnvelope(f *testing.F) {
	fx := getFixture(f)
	f.Add(fx.envelope(f, 1, fx.issued[101]))
	f.Add(rawEnvelope(company.RUCEmisor, "214844360018", 2, 3, []byte("x"), fx.at, []byte("<CFE/>")))
	f.Add([]byte(`<EnvioCFE xmlns="http://cfe.dgi.gub.uy"><Caratula><CantCFE>x</CantCFE></Caratula></EnvioCFE>`))
	f.Fuzz(func(t *testing.T, b []byte) {
		env, _ := checkEnvelope(b, company.RUCEmisor)
		if env != nil {
			for i, c := range env.CFEs {
				if len(c) > len(b) {
					t.Fatalf("CFE %d is longer than the envelope", i)
				}
				_ = judgeCFE(i+1, c, env.Cert, nil)
			}
		}
	})
}
