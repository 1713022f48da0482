package sandbox_test

import (
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/signer"
)

func dec(s string) *decimal.Decimal { d := decimal.RequireFromString(s); return &d }

// ticket is an e-Ticket of Alfa: two units at 61.00 with IVA at the basic
// rate included, so (DGI's formulas, prices with IVA) the net is
// 122 / 1.22 = 100.00, the IVA 22.00 and the amount to pay 122.00.
func ticket(nro int64, signedAt time.Time) *cfe.CFE {
	day := cfe.DateOf(signedAt.In(cfe.Montevideo))
	return &cfe.CFE{
		TmstFirma: signedAt,
		IdDoc:     cfe.IdDoc{TipoCFE: cfe.ETicket, Serie: "A", Nro: nro, FchEmis: day, MntBruto: 1, FmaPago: 1},
		Emisor: cfe.Emisor{RUCEmisor: rucAlfa, RznSoc: "Alfa S.A.", CdgDGISucur: 1,
			DomFiscal: "Rincón 500", Ciudad: "Montevideo", Departamento: "Montevideo"},
		Items: []cfe.Item{{NroLinDet: 1, IndFact: 3, NomItem: "Yerba 1 kg", Cantidad: *dec("2"), UniMed: "Unid",
			PrecioUnitario: *dec("61.00"), MontoItem: *dec("122.00")}},
		Totales: cfe.Totales{TpoMoneda: "UYU", MntNetoIVATasaBasica: dec("100.00"), IVATasaBasica: dec("22"),
			MntIVATasaBasica: dec("22.00"), MntTotal: dec("122.00"), CantLinDet: 1, MntPagar: dec("122.00")},
		CAEData: cfe.CAEData{CAEID: "90269990000", DNro: 1, HNro: 1000, FecVenc: cfe.Date{Year: 2028, Month: time.March, Day: 1}},
	}
}

// agentSigner is a local agent's certificate for Alfa.
func agentSigner(t *testing.T) *signer.Signer {
	t.Helper()
	creds, err := signer.GenerateTestCertificate(rucAlfa, "Alfa S.A.", t0.Add(-24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	s, err := signer.New(signer.Config{Credentials: creds, Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// sign builds and signs c as a local agent would.
func sign(t *testing.T, s *signer.Signer, c *cfe.CFE) *signer.Signed {
	t.Helper()
	raw, err := cfe.MarshalXML(c)
	if err != nil {
		t.Fatal(err)
	}
	signed, err := s.Sign(raw)
	if err != nil {
		t.Fatal(err)
	}
	return signed
}
