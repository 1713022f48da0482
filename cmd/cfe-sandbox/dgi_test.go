package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/dgi"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/signer"
)

var dgiListening = regexp.MustCompile(`escuchando en (http://\S+)[^\n]*\nadministración en (http://\S+)/admin/estado`)

// dgiAnnouncer sends the services' and admin URLs once the command prints them.
type dgiAnnouncer struct {
	testtool.SyncBuffer
	ready chan [2]string
	once  sync.Once
}

func (a *dgiAnnouncer) Write(p []byte) (int, error) {
	n, err := a.SyncBuffer.Write(p)
	if m := dgiListening.FindStringSubmatch(a.String()); m != nil {
		a.once.Do(func() { a.ready <- [2]string{m[1], m[2]} })
	}
	return n, err
}

// `cfe-sandbox dgi` serves DGI's services at DGI's paths with the
// certificate it writes to DIR/dgi-cert.pem: a client pinned to that file
// gets a verified answer; the admin endpoint answers; it stops with its
// context; a second start on the same directory keeps the certificate.
func TestDGICommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	creds, err := signer.GenerateTestCertificate("219999830019", "Empresa de Prueba S.A.", time.Now().Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	var first []byte
	for run := range 2 {
		c, cancel := context.WithCancel(context.Background())
		out := &dgiAnnouncer{ready: make(chan [2]string, 1)}
		cmd := newRootCommand(c)
		cmd.SetArgs([]string{"dgi", "--data-dir", dir, "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0"})
		cmd.SetOut(out)
		done := make(chan error, 1)
		go func() { done <- cmd.Execute() }()
		var urls [2]string
		select {
		case urls = <-out.ready:
		case err := <-done:
			cancel()
			t.Fatalf("the emulator stopped before listening: %v\n%s", err, out.String())
		case <-time.After(time.Minute):
			cancel()
			t.Fatalf("the emulator did not start within a minute: %s", out.String())
		}
		pemBytes, err := os.ReadFile(filepath.Join(dir, "dgi-cert.pem"))
		if err != nil {
			t.Fatal(err)
		}
		if run == 0 {
			first = pemBytes
		} else if string(first) != string(pemBytes) {
			t.Error("a second start made a new certificate")
		}
		certs, err := dgi.ParseCertificates(pemBytes)
		if err != nil || !strings.Contains(certs[0].Subject.CommonName, signer.TestMarker) || signer.CertRUC(certs[0]) != cfe.RUCDGI {
			t.Fatalf("dgi-cert.pem: %v %+v, want a test certificate of DGI's RUC", err, certs)
		}
		cl, err := dgi.New(dgi.Config{ReceptionURL: urls[0] + dgi.PathReception, QueryURL: urls[0] + dgi.PathQueries,
			Credentials: creds, DGICertificate: certs[0]})
		if err != nil {
			t.Fatal(err)
		}
		qc, qcancel := context.WithTimeout(context.Background(), time.Minute)
		list, err := cl.Envelopes(qc, dgi.EnvelopeQuery{Desde: time.Now().Add(-time.Hour), Hasta: time.Now()})
		qcancel()
		cl.Close()
		if err != nil || len(list) != 0 {
			t.Errorf("run %d: Envelopes: %v %v, want an empty verified answer", run, list, err)
		}
		res, err := client.Get(urls[1] + "/admin/estado")
		if err != nil {
			t.Fatal(err)
		}
		var st struct{ Sobres int }
		err = json.NewDecoder(res.Body).Decode(&st)
		res.Body.Close()
		if err != nil || res.StatusCode != 200 || st.Sobres != 0 {
			t.Errorf("admin estado: %v %d %+v", err, res.StatusCode, st)
		}
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("run %d: %v", run, err)
			}
		case <-time.After(time.Minute):
			t.Fatal("the emulator did not stop within a minute of its context's end")
		}
	}
}
