package printer

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// testPDF is a small valid PDF of one 80 × 150 mm page.
var testPDF = []byte("%PDF-1.4\n" +
	"1 0 obj <</Type /Catalog /Pages 2 0 R>> endobj\n" +
	"2 0 obj <</Type /Pages /Kids [3 0 R] /Count 1>> endobj\n" +
	"3 0 obj <</Type /Page /Parent 2 0 R /MediaBox [0 0 226.77 425.2]>> endobj\n" +
	"trailer <</Root 1 0 R /Size 4>>\n%%EOF\n")

// jobAttributes asks ipptool (an independent IPP client) for a job's state
// and copies.
func jobAttributes(t *testing.T, e *cupsEnv, uri, jobID string) map[string]string {
	return e.ipptool(t, uri, `{
	OPERATION Get-Job-Attributes
	GROUP operation-attributes-tag
	ATTR charset attributes-charset utf-8
	ATTR naturalLanguage attributes-natural-language en
	ATTR uri printer-uri $uri
	ATTR integer job-id `+jobID+`
	ATTR keyword requested-attributes job-state,copies,job-state-reasons
}`)
}

// spooled waits for the emulated printer to keep a document and returns it.
func spooled(t *testing.T, e *cupsEnv, before int) []byte {
	t.Helper()
	var files []string
	waitFor(t, "the printed document", func() bool {
		files, _ = filepath.Glob(filepath.Join(e.spool, "*.pdf"))
		return len(files) > before
	})
	b, err := os.ReadFile(files[len(files)-1])
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestCUPS(t *testing.T) {
	t.Parallel()
	e := startCUPS(t)
	server := NewCUPSServer(CUPSConfig{Host: "127.0.0.1", Port: e.port, Wait: time.Minute})
	ctx := context.Background()

	t.Run("prints copies as a job attribute", func(t *testing.T) {
		res, err := server.Printer(rawQueue).Print(ctx, Job{Name: "e-Ticket A-1", PDF: testPDF, Copies: 2})
		if err != nil {
			t.Fatalf("Print: %v", err)
		}
		if res.State != StateCompleted || res.Copies != 2 || res.JobID == "" || res.Backend != BackendCUPS {
			t.Errorf("result %+v, want a completed job of 2 copies with an id", res)
		}
		// What CUPS recorded, asked by another IPP client.
		got := jobAttributes(t, e, "ipp://"+e.server+"/printers/"+rawQueue, res.JobID)
		if got["job-state"] != "completed" || got["copies"] != "2" {
			t.Errorf("CUPS reports job %s as %v, want completed with copies 2", res.JobID, got)
		}
		// What reached the printer: the same bytes, and the copies.
		if doc := spooled(t, e, 0); !bytes.Equal(doc, testPDF) {
			t.Errorf("the printer received %d bytes that differ from the %d sent", len(doc), len(testPDF))
		}
		if got := jobAttributes(t, e, e.ipp, "1"); got["copies"] != "2" {
			t.Errorf("the printer's job has %v, want copies 2", got)
		}
	})

	t.Run("a stopped printer returns its reason and cancels the job", func(t *testing.T) {
		e.run(t, testtoolPath(t, "cupsdisable"), "-h", e.server, "-r", "Sin papel", rawQueue)
		defer e.run(t, testtoolPath(t, "cupsenable"), "-h", e.server, rawQueue)
		_, err := server.Printer(rawQueue).Print(ctx, Job{Name: "e-Factura A-2", PDF: testPDF})
		wantError(t, err, cfe.EUNAVAILABLE, "Sin papel")
		out := e.run(t, testtoolPath(t, "lpstat"), "-h", e.server, "-o", rawQueue)
		if strings.TrimSpace(out) != "" {
			t.Errorf("the failed job is still queued:\n%s", out)
		}
	})

	t.Run("a queue that rejects jobs returns its reason", func(t *testing.T) {
		e.run(t, testtoolPath(t, "cupsreject"), "-h", e.server, "-r", "Fuera de servicio", rawQueue)
		defer e.run(t, testtoolPath(t, "cupsaccept"), "-h", e.server, rawQueue)
		_, err := server.Printer(rawQueue).Print(ctx, Job{Name: "e-Factura A-3", PDF: testPDF})
		wantError(t, err, cfe.EUNAVAILABLE, "Fuera de servicio")
	})

	t.Run("an unknown queue is not found", func(t *testing.T) {
		_, err := server.Printer("no-existe").Print(ctx, Job{Name: "x", PDF: testPDF})
		wantError(t, err, cfe.ENOTFOUND, "no-existe")
	})

	t.Run("CUPS unreachable", func(t *testing.T) {
		down := NewCUPSServer(CUPSConfig{Host: "127.0.0.1", Port: freePort(t)})
		_, err := down.Printer(rawQueue).Print(ctx, Job{Name: "x", PDF: testPDF})
		wantError(t, err, cfe.EUNAVAILABLE, "CUPS")
	})

	t.Run("discover lists the queues", func(t *testing.T) {
		queues, err := server.Queues(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(queues) != 1 || queues[0].Name != rawQueue || !queues[0].Accepting || queues[0].State != "idle" {
			t.Errorf("queues %+v, want %s idle and accepting", queues, rawQueue)
		}
	})

	t.Run("lp fallback", func(t *testing.T) {
		before, _ := filepath.Glob(filepath.Join(e.spool, "*.pdf"))
		res, err := (&LP{Server: e.server, Queue: rawQueue}).Print(ctx, Job{Name: "e-Ticket A-4", PDF: testPDF, Copies: 3})
		if err != nil {
			t.Fatalf("Print: %v", err)
		}
		if !strings.HasPrefix(res.JobID, rawQueue+"-") || res.State != StatePending || res.Copies != 3 {
			t.Errorf("result %+v, want job %s-N pending with 3 copies", res, rawQueue)
		}
		if doc := spooled(t, e, len(before)); !bytes.Equal(doc, testPDF) {
			t.Errorf("the printer received %d bytes that differ from the %d sent", len(doc), len(testPDF))
		}
		_, err = (&LP{Server: e.server, Queue: "no-existe"}).Print(ctx, Job{Name: "x", PDF: testPDF})
		wantError(t, err, cfe.ENOTFOUND, "no-existe")
	})

	t.Run("manager with a raw queue name", func(t *testing.T) {
		m, err := NewManager(Config{CUPS: CUPSConfig{Host: "127.0.0.1", Port: e.port, Wait: time.Minute},
			RawQueues: BackendCUPS})
		if err != nil {
			t.Fatal(err)
		}
		res, err := m.Print(ctx, rawQueue, Job{Name: "e-Ticket A-5", PDF: testPDF})
		if err != nil || res.State != StateCompleted {
			t.Fatalf("Print: %+v, %v", res, err)
		}
	})
}

func testtoolPath(t *testing.T, tool string) string { return requireTool(t, tool) }

// wantError fails unless err is a *cfe.Error of that code whose message
// contains want.
func wantError(t *testing.T, err error, code, want string) {
	t.Helper()
	var e *cfe.Error
	if !errors.As(err, &e) || e.Code != code {
		t.Fatalf("error %v, want code %s", err, code)
	}
	if !strings.Contains(e.Message, want) {
		t.Errorf("message %q lacks %q", e.Message, want)
	}
}
