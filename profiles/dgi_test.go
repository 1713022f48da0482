package profiles

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testPEM returns a self-signed certificate in PEM, made for the test.
func testPEM(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "DGI de prueba"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

func TestValidator_DGI(t *testing.T) {
	t.Parallel()
	cert := testPEM(t)
	certFile := filepath.Join(t.TempDir(), "dgi.pem")
	if err := os.WriteFile(certFile, []byte(cert), 0o600); err != nil {
		t.Fatal(err)
	}
	const (
		rec  = "http://127.0.0.1:8090/ePrueba/ws_eprueba"
		cons = "http://127.0.0.1:8090/ePrueba/ws_consultasPrueba"
	)
	for _, tc := range []struct {
		name string
		d    DGI
		want []string
	}{
		{"none: provider", DGI{}, nil},
		{"provider ignores the rest", DGI{Modo: DGIProvider, URLRecepcion: "nada"}, nil},
		{"direct on loopback with PEM", DGI{Modo: DGIDirect, URLRecepcion: rec, URLConsultas: cons, Certificado: cert}, nil},
		{"direct with a PEM file", DGI{Modo: DGIDirect, URLRecepcion: rec, URLConsultas: cons, Certificado: certFile}, nil},
		{"direct on DGI's hosts: shipped certificate", DGI{Modo: DGIDirect,
			URLRecepcion: "https://efactura.dgi.gub.uy:6443/ePrueba/ws_eprueba",
			URLConsultas: "https://efactura.dgi.gub.uy:6460/ePrueba/ws_consultasPrueba"}, nil},
		{"unknown mode", DGI{Modo: "manual"}, []string{"profiles.caja1.dgi.modo"}},
		{"direct without URLs", DGI{Modo: DGIDirect, Certificado: cert},
			[]string{"profiles.caja1.dgi.url_recepcion", "profiles.caja1.dgi.url_consultas"}},
		{"http to another host", DGI{Modo: DGIDirect, URLRecepcion: "http://dgi.example.com/r", URLConsultas: cons, Certificado: cert},
			[]string{"profiles.caja1.dgi.url_recepcion"}},
		{"ftp", DGI{Modo: DGIDirect, URLRecepcion: rec, URLConsultas: "ftp://127.0.0.1/c", Certificado: cert},
			[]string{"profiles.caja1.dgi.url_consultas"}},
		{"stand-in without certificate", DGI{Modo: DGIDirect, URLRecepcion: rec, URLConsultas: cons},
			[]string{"profiles.caja1.dgi.certificado"}},
		{"not a certificate", DGI{Modo: DGIDirect, URLRecepcion: rec, URLConsultas: cons, Certificado: "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----"},
			[]string{"profiles.caja1.dgi.certificado"}},
		{"missing file", DGI{Modo: DGIDirect, URLRecepcion: rec, URLConsultas: cons, Certificado: filepath.Join(t.TempDir(), "no.pem")},
			[]string{"profiles.caja1.dgi.certificado"}},
		{"warning too soon, pace too slow", DGI{Modo: DGIDirect, URLRecepcion: rec, URLConsultas: cons, Certificado: cert,
			AvisoSinRecibir: time.Second, PausaEntreSobres: 2 * time.Hour},
			[]string{"profiles.caja1.dgi.aviso_sin_recibir", "profiles.caja1.dgi.pausa_entre_sobres"}},
		{"provider mode, its pace", DGI{ConsultaProveedor: time.Second}, nil},
		{"reports since a day", DGI{Modo: DGIDirect, URLRecepcion: rec, URLConsultas: cons, Certificado: cert, ReportesDesde: "2026-11-01"}, nil},
		{"reports since no day", DGI{Modo: DGIDirect, URLRecepcion: rec, URLConsultas: cons, Certificado: cert, ReportesDesde: "1/11/2026"},
			[]string{"profiles.caja1.dgi.reportes_desde"}},
		{"provider mode asked too often", DGI{Modo: DGIProvider, ConsultaProveedor: time.Millisecond},
			[]string{"profiles.caja1.dgi.consulta_proveedor"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := validConfig()
			p := c.Profiles["caja1"]
			p.DGI = tc.d
			c.Profiles["caja1"] = p
			err := c.Validate()
			if tc.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			e := wantInvalid(t, err, tc.want...)
			for _, f := range e.Fields {
				if strings.Contains(f.Mensaje, "BEGIN CERTIFICATE-----\nAAAA") {
					t.Errorf("%s echoes the certificate: %s", f.Campo, f.Mensaje)
				}
			}
		})
	}
}

func TestLoad_DGI(t *testing.T) {
	clearEnv(t)
	dir := t.TempDir()
	cert := testPEM(t)
	indented := "        " + strings.ReplaceAll(strings.TrimSpace(cert), "\n", "\n        ")
	writeConfig(t, dir, `active: caja
profiles:
  caja:
    environment: sandbox
    company: {ruc: "219999830019", razon_social: "X", domicilio_fiscal: "Calle 1", ciudad: "Montevideo", departamento: "Montevideo", cdg_dgi_sucur: 1}
    certificate: {path: cert.p12}
    tax: {valor_ui: "6.1"}
    dgi:
      modo: directo
      url_recepcion: http://127.0.0.1:8090/ePrueba/ws_eprueba
      url_consultas: http://127.0.0.1:8090/ePrueba/ws_consultasPrueba
      aviso_sin_recibir: 5m
      pausa_entre_sobres: 2s
      certificado: |
`+indented+"\n")
	cfg, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := cfg.ActiveProfile()
	d := p.DGI
	if !d.Direct() || d.URLConsultas != "http://127.0.0.1:8090/ePrueba/ws_consultasPrueba" || d.UrgentAfterOrDefault() != 5*time.Minute ||
		d.PausaEntreSobres != 2*time.Second {
		t.Fatalf("dgi block read as %+v", d)
	}
	b, err := d.CertificatePEM()
	if err != nil || strings.TrimSpace(string(b)) != strings.TrimSpace(cert) {
		t.Fatalf("certificate read back as %q (%v)", b, err)
	}
	if (DGI{}).Direct() || (DGI{}).UrgentAfterOrDefault() != DefaultDGIUrgentAfter {
		t.Fatal("an empty block must be provider mode with the default warning time")
	}
}
