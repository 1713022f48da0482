package printer

import (
	"bytes"
	"context"
	"net"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/testtool/thermal"
)

// TestCUPS_PrintRaw prints ESC/POS through a CUPS raw queue whose device is
// a thermal printer on the network (socket://, CUPS's raw port backend, to
// the fake printer on loopback): over IPP (the cups backend) and with
// lp -o raw (the lp backend), the printer receives the bytes untouched; a
// stopped queue is refused with its reason.
func TestCUPS_PrintRaw(t *testing.T) {
	t.Parallel()
	e := startCUPS(t)
	f := &thermal.Printer{}
	addr := f.Listen(t)
	const queue = "termica"
	e.run(t, requireTool(t, "lpadmin"), "-h", e.server, "-p", queue, "-v", "socket://"+addr,
		"-m", "raw", "-E")
	ctx := context.Background()
	server := NewCUPSServer(CUPSConfig{Host: "127.0.0.1", Port: e.port})
	lp := &LP{Command: requireTool(t, "lp"), Server: e.server, Queue: queue}
	sent := 0
	for _, tc := range []struct {
		name string
		p    RawPrinter
		want Backend
	}{
		{"ipp", server.Printer(queue), BackendCUPS},
		{"lp -o raw", lp, BackendLP},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := tc.p.PrintRaw(ctx, RawJob{Name: "e-Ticket A-1", Data: receiptBytes, Copies: 2})
			if err != nil {
				t.Fatalf("PrintRaw: %v", err)
			}
			if res.Backend != tc.want || res.JobID == "" || res.State != StatePending || res.Copies != 2 {
				t.Errorf("result %+v, want an accepted job of 2 copies with an id", res)
			}
			sent += 2
			want := bytes.Repeat(receiptBytes, sent)
			waitFor(t, "CUPS to deliver the job", func() bool { return len(f.Received()) >= len(want) })
			if got := f.Received(); !bytes.Equal(got, want) {
				t.Errorf("the printer received %q, want %q", got, want)
			}
		})
	}
	t.Run("a stopped queue is refused with its reason", func(t *testing.T) {
		e.run(t, requireTool(t, "cupsdisable"), "-h", e.server, "-r", "Sin papel", queue)
		defer e.run(t, requireTool(t, "cupsenable"), "-h", e.server, queue)
		before := len(f.Received())
		_, err := server.Printer(queue).PrintRaw(ctx, RawJob{Name: "e-Ticket A-2", Data: receiptBytes})
		if cfe.ErrorCode(err) != cfe.EUNAVAILABLE || !strings.Contains(cfe.ErrorMessage(err), "Sin papel") {
			t.Fatalf("error %v, want EUNAVAILABLE with the queue's reason", err)
		}
		// The job is cancelled, so that it does not print when the queue
		// starts again.
		m := regexp.MustCompile(`trabajo (\d+)`).FindStringSubmatch(cfe.ErrorMessage(err))
		if m == nil {
			t.Fatalf("the error does not name the cancelled job: %s", cfe.ErrorMessage(err))
		}
		if got := jobAttributes(t, e, "ipp://"+e.server+"/printers/"+queue, m[1]); got["job-state"] != "canceled" {
			t.Errorf("CUPS reports the refused job as %v, want canceled", got)
		}
		if got := len(f.Received()); got != before {
			t.Errorf("the refused job reached the printer (%d bytes)", got-before)
		}
	})
}

// TestCUPS_UntilAccepted prints a PDF on a queue whose printer takes the
// job and does not finish it (a network printer that never reads): with
// UntilAccepted, Print answers once CUPS reports the job processing, where
// it would otherwise follow the job for a minute.
func TestCUPS_UntilAccepted(t *testing.T) {
	t.Parallel()
	e := startCUPS(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var held []net.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	accepted := make(chan net.Conn, 4)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			accepted <- c // never read: the job stays with the printer
		}
	}()
	const queue = "lenta"
	e.run(t, requireTool(t, "lpadmin"), "-h", e.server, "-p", queue, "-v", "socket://"+l.Addr().String(), "-m", "raw", "-E")
	server := NewCUPSServer(CUPSConfig{Host: "127.0.0.1", Port: e.port, Wait: time.Minute, UntilAccepted: true})
	// The printer never finishes: following the job to its end would run
	// into this context's end (Print then answers without error too).
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := server.Printer(queue).Print(ctx, Job{Name: "e-Ticket A-9", PDF: testPDF})
	if err != nil {
		t.Fatalf("Print: %v", err)
	}
	if ctx.Err() != nil {
		t.Error("Print followed the job until the context ended instead of answering once the printer had it")
	}
	if res.State != StateProcessing || res.JobID == "" {
		t.Errorf("result %+v, want the job processing", res)
	}
	for len(accepted) > 0 {
		held = append(held, <-accepted)
	}
}
