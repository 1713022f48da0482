package scalefill

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/issuer"
	"github.com/cfe-agent/cfe-agent/signer"
	"github.com/cfe-agent/cfe-agent/store"
)

// Company is the issuing company of the filled stores: DGI's test company.
var Company = cfe.Emisor{RUCEmisor: "219999830019", RznSoc: "Empresa de Prueba S.A.", CdgDGISucur: 1,
	DomFiscal: "Av. 18 de Julio 1234", Ciudad: "Montevideo", Departamento: "Montevideo"}

// items are the lines the templates' sales are made of.
var items = []struct {
	name  string
	price string
	ind   int
}{
	{"Yerba mate 1 kg", "152.50", 3}, {"Pan flauta", "60", 2}, {"Libro de lectura", "890", 1},
	{"Leche entera 1 L", "42", 2}, {"Aceite de girasol 900 ml", "129.90", 3}, {"Queso colonia 500 g", "318", 3},
	{"Detergente 750 ml", "89.50", 3}, {"Arroz 1 kg", "64.90", 2}, {"Café molido 250 g", "245", 3},
}

// Templates signs n distinct e-Tickets with the real issuer and signer (a
// generated test certificate of Company, DGI's test CAE ranges) in a store in
// dir: sales of 1 to 9 lines, with and without a payment line. They are what
// Generator varies.
func Templates(ctx context.Context, dir string, n int, at time.Time) (_ []*cfe.Issued, err error) {
	creds, err := signer.GenerateTestCertificate(Company.RUCEmisor, Company.RznSoc, at)
	if err != nil {
		return nil, err
	}
	sg, err := signer.New(signer.Config{Credentials: creds, Now: func() time.Time { return at }})
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	db, err := store.Open(filepath.Join(dir, "templates.db"), store.Options{Now: func() time.Time { return at }})
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, db.Close()) }()
	for _, r := range signer.SandboxRanges(Company.RUCEmisor, cfe.DateOf(at.In(cfe.Montevideo))) {
		if err := db.PutRange(ctx, r); err != nil {
			return nil, err
		}
	}
	iss := issuer.New(issuer.Config{Store: db, Signer: signer.Canonical{Signer: sg}, Emisor: func() cfe.Emisor { return Company },
		Tax: cfe.DefaultTaxConfig(), Now: func() time.Time { return at },
		Zone: func(time.Time) issuer.ZoneStatus {
			return issuer.ZoneStatus{Name: "America/Montevideo", Source: "scalefill", Offset: -3 * 60 * 60}
		}})
	var out []*cfe.Issued
	for i := range n {
		req, err := saleRequest(i)
		if err != nil {
			return nil, err
		}
		res, err := iss.Issue(ctx, req)
		if err != nil {
			return nil, fmt.Errorf("template %d: %w", i, err)
		}
		out = append(out, res.Issued)
	}
	return out, nil
}

// saleRequest is the signing request of template i: 1 + i%9 lines.
func saleRequest(i int) (*cfe.Request, error) {
	type line struct {
		Ind   int    `json:"indicadorFacturacion"`
		Name  string `json:"nombreItem"`
		Qty   int    `json:"cantidad"`
		Price string `json:"precioUnitario"`
	}
	var lines []line
	for j := range 1 + i%9 {
		it := items[(i+j)%len(items)]
		lines = append(lines, line{it.ind, it.name, 1 + (i+j)%3, it.price})
	}
	body := map[string]any{
		"uuid":   fmt.Sprintf("00000000-0000-4000-8000-%012d", i+1),
		"adenda": "Gracias por su compra. Caja 1.",
		"cfe":    map[string]any{"idDoc": map[string]any{"tipoCfe": 101, "formaPago": 1}, "detalles": lines},
	}
	data, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	var req cfe.Request
	return &req, json.Unmarshal(data, &req)
}
