package profiles

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// DGIMode is how the company's CFEs reach DGI.
type DGIMode string

// The two ways a CFE reaches DGI (dgi-lifecycle.md §1).
const (
	// DGIProvider: the hosted service is the company's provider and sends
	// to DGI (the default).
	DGIProvider DGIMode = "proveedor"
	// DGIDirect: the agent sends envelopes to DGI's web services itself.
	DGIDirect DGIMode = "directo"
)

// Defaults and bounds of DGI.
const (
	// DefaultDGIUrgentAfter is how long a CFE DGI must hold before the goods
	// leave (e-Factura and its notes, e-Remito, e-Resguardo, e-Tickets above
	// the cap) may stay unreceived before the tray turns amber.
	DefaultDGIUrgentAfter = 10 * time.Minute
	minDGIUrgentAfter     = time.Minute
	maxDGIPace            = time.Hour
	minDGIProviderPoll    = 100 * time.Millisecond
	// dgiHostSuffix names DGI's own hosts: their certificate is shipped.
	dgiHostSuffix = "dgi.gub.uy"
)

// DGI configures how CFEs reach DGI (the profile's dgi block). In provider
// mode (the default) nothing else is read. In direct mode the agent sends
// envelopes to URLRecepcion, asks on URLConsultas, and checks DGI's answers
// against Certificado (optional for DGI's own hosts: the agent ships DGI's
// certificates).
type DGI struct {
	Modo DGIMode `yaml:"modo,omitempty"`
	// URLRecepcion is DGI's reception service (ws_efactura), URLConsultas
	// its query service (ws_consultas): https, or http to this machine
	// only (tests, the emulator).
	URLRecepcion string `yaml:"url_recepcion,omitempty"`
	URLConsultas string `yaml:"url_consultas,omitempty"`
	// Certificado is the certificate DGI signs its answers with: PEM text,
	// or the path of a PEM file.
	Certificado string `yaml:"certificado,omitempty"`
	// AvisoSinRecibir is how long a CFE that DGI must hold before the goods
	// leave may stay unreceived before the tray warns (default 10m).
	AvisoSinRecibir time.Duration `yaml:"aviso_sin_recibir,omitempty"`
	// PausaEntreSobres is the least time between two envelopes (the
	// catch-up's pace after days without DGI; 0: one after the other).
	PausaEntreSobres time.Duration `yaml:"pausa_entre_sobres,omitempty"`
	// ConsultaProveedor is, in provider mode, how often the agent asks the
	// hosted service for DGI's verdicts on the CFEs it delivered (0: the
	// default, 30 s).
	ConsultaProveedor time.Duration `yaml:"consulta_proveedor,omitempty"`
	// ReportesDesde is, in direct mode, the first day (AAAA-MM-DD) whose
	// daily report the agent sends; empty means the signature date of the
	// first CFE it sends to DGI (docs/dgi-direct.md).
	ReportesDesde string `yaml:"reportes_desde,omitempty"`
}

// ReportsSince returns ReportesDesde as a date, zero when unset.
func (d DGI) ReportsSince() (cfe.Date, error) {
	if d.ReportesDesde == "" {
		return cfe.Date{}, nil
	}
	return cfe.ParseDate(d.ReportesDesde)
}

// Direct reports whether the agent sends to DGI itself.
func (d DGI) Direct() bool { return d.Modo == DGIDirect }

// UrgentAfterOrDefault is AvisoSinRecibir, or its default when unset.
func (d DGI) UrgentAfterOrDefault() time.Duration {
	if d.AvisoSinRecibir <= 0 {
		return DefaultDGIUrgentAfter
	}
	return d.AvisoSinRecibir
}

// CertificatePEM returns the PEM of DGI's certificate the block names (the
// text itself, or the file's content), nil when none is set.
func (d DGI) CertificatePEM() ([]byte, error) {
	c := strings.TrimSpace(d.Certificado)
	if c == "" {
		return nil, nil
	}
	if strings.HasPrefix(c, "-----BEGIN") {
		return []byte(c), nil
	}
	b, err := os.ReadFile(c)
	if err != nil {
		return nil, fmt.Errorf("no se puede leer el archivo del certificado de DGI %s: %w", c, err)
	}
	return b, nil
}

// OwnHosts reports whether both URLs are DGI's own hosts, whose
// certificate the agent ships.
func (d DGI) OwnHosts() bool { return dgiHost(d.URLRecepcion) && dgiHost(d.URLConsultas) }

func dgiHost(u string) bool {
	p, err := url.Parse(u)
	if err != nil {
		return false
	}
	h := strings.ToLower(p.Hostname())
	return p.Scheme == "https" && (h == dgiHostSuffix || strings.HasSuffix(h, "."+dgiHostSuffix))
}

// dgiURL says, in Spanish, why u cannot be one of DGI's endpoints ("" when
// it can): https, or http to a loopback host only (as package dgi
// enforces).
func dgiURL(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.Host == "" || p.User != nil || p.Fragment != "" {
		return "se espera una URL como https://efactura.dgi.gub.uy:6443/ePrueba/ws_eprueba"
	}
	switch p.Scheme {
	case "https":
		return ""
	case "http":
		h := p.Hostname()
		if h == "localhost" {
			return ""
		}
		if ip := net.ParseIP(h); ip != nil && ip.IsLoopback() {
			return ""
		}
		return "usa http sin cifrar: DGI se contacta por https (http solo se admite hacia esta misma máquina, para pruebas)"
	}
	return "debe ser una URL https"
}

func (v *validator) dgi(at string, d DGI) {
	if d.ConsultaProveedor != 0 && (d.ConsultaProveedor < minDGIProviderPoll || d.ConsultaProveedor > maxDGIPace) {
		v.fail(at+".consulta_proveedor", "debe estar entre %s y %s (0: 30s)", minDGIProviderPoll, maxDGIPace)
	}
	switch d.Modo {
	case "", DGIProvider:
		return
	case DGIDirect:
	default:
		v.fail(at+".modo", "se espera %q (el servicio hosteado envía a DGI) o %q (el agente envía a DGI)", DGIProvider, DGIDirect)
		return
	}
	if _, err := d.ReportsSince(); err != nil {
		v.fail(at+".reportes_desde", "%s", err.Error())
	}
	for _, u := range []struct{ name, url string }{{"url_recepcion", d.URLRecepcion}, {"url_consultas", d.URLConsultas}} {
		if u.url == "" {
			v.fail(at+"."+u.name, "es obligatoria en modo %s", DGIDirect)
			continue
		}
		if msg := dgiURL(u.url); msg != "" {
			v.fail(at+"."+u.name, "%s", msg)
		}
	}
	switch b, err := d.CertificatePEM(); {
	case err != nil:
		v.fail(at+".certificado", "%s", err.Error())
	case b == nil && !d.OwnHosts():
		v.fail(at+".certificado", "es obligatorio en modo %s fuera de los servidores de DGI: el certificado (PEM) con que se firman las respuestas", DGIDirect)
	case b != nil:
		if msg := checkPEMCertificate(b); msg != "" {
			v.fail(at+".certificado", "%s", msg)
		}
	}
	if d.AvisoSinRecibir != 0 && d.AvisoSinRecibir < minDGIUrgentAfter {
		v.fail(at+".aviso_sin_recibir", "debe ser de al menos %s (0: %s)", minDGIUrgentAfter, DefaultDGIUrgentAfter)
	}
	if d.PausaEntreSobres < 0 || d.PausaEntreSobres > maxDGIPace {
		v.fail(at+".pausa_entre_sobres", "debe estar entre 0 y %s", maxDGIPace)
	}
}

// checkPEMCertificate says, in Spanish, why b holds no readable
// certificate ("" when it does).
func checkPEMCertificate(b []byte) string {
	blk, _ := pem.Decode(b)
	if blk == nil || blk.Type != "CERTIFICATE" {
		return "no contiene un certificado PEM (-----BEGIN CERTIFICATE-----)"
	}
	if _, err := x509.ParseCertificate(blk.Bytes); err != nil {
		return "el certificado PEM no se puede leer: " + err.Error()
	}
	return ""
}
