package main_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/cfe-agent/cfe-agent/internal/testtool/cupsd"
	"github.com/cfe-agent/cfe-agent/internal/testtool/thermal"
)

// BenchmarkSaleToPrinter times one sale as the cashier waits for it, over
// real HTTP against the agent binary: POST /sign-cfe (signed, fsynced), then
// POST /pdf naming the till's printer, answered once the printer or its
// spooler has accepted the job. One sale at a time. It reports the p50 and
// p99 of the sales in ms (p50-ms, p99-ms), besides the mean (ns/op).
//
//   - escpos-tcp: a thermal printer on TCP (ESC/POS rendering, the bytes
//     written to the printer's socket, its status read back), answered
//     with the PDF as by default;
//   - escpos-tcp-json: the same, asking for the print result in JSON
//     (Accept: application/json): no PDF rendered nor sent;
//   - cups: a private CUPS server with an emulated IPP printer (PDF
//     rendering, the job accepted by CUPS: CUPSConfig.UntilAccepted).
//
// Every sale must be answered 200 with the job's format, and the printer
// must have received every one of them. Sales are timed one at a time, as
// at a till, where they are seconds apart: between two, with the clock
// stopped, the benchmark waits until the printer has the previous receipt
// and then, for CUPS, salePause more (CUPS's ipp backend holds the next job
// while it follows the last one to completion, about a second).
//
//	go test -run '^$' -bench SaleToPrinter -benchtime 200x ./cmd/cfe-agent/
func BenchmarkSaleToPrinter(b *testing.B) {
	for _, asJSON := range []bool{false, true} {
		name := "escpos-tcp"
		if asJSON {
			name += "-json" // Accept: application/json: the print result alone, no PDF rendered
		}
		b.Run(name, func(b *testing.B) {
			p := &thermal.Printer{}
			printer := "      caja:\n        backend: tcp\n        protocol: escpos\n        address: " + p.Listen(b) + "\n"
			accept = ""
			if asJSON {
				accept = "application/json"
			}
			defer func() { accept = "" }()
			sales := benchSales(b, nil, printer, "escpos", nil)
			// Each receipt ends with the partial cut (GS V 66 n).
			if got := bytes.Count(p.Received(), []byte{0x1d, 'V', 66}); got != sales {
				b.Errorf("the thermal printer cut %d receipts, want %d", got, sales)
			}
		})
	}
	b.Run("cups", func(b *testing.B) {
		e := cupsd.Start(b)
		printer := "      caja:\n        backend: cups\n        queue: " + cupsd.RawQueue + "\n"
		// Each job leaves its document and its attributes in the spool.
		idle := func(made int) bool { return countFiles(e.Spool) >= 2*made }
		sales := benchSales(b, []string{"CUPS_SERVER=" + e.Server}, printer, "pdf", idle)
		// The emulator keeps every document it prints (-k); accepted jobs
		// may still be on their way to it.
		cupsd.WaitFor(b, fmt.Sprintf("%d documents at the emulated printer", sales), func() bool {
			return countFiles(e.Spool) >= sales
		})
	})
}

// benchSales starts the agent with the printer "caja" (YAML lines of the
// profile's printers) as its default, warms it up and times b's sales. Every
// answer of POST /pdf must be 200 with X-CFE-Formato format. When idle is
// not nil, each sale waits, untimed, until idle reports that the printer has
// the sales made so far, and salePause more. It returns the sales made, warm-up included.
func benchSales(b *testing.B, env []string, printer, format string,
	idle func(made int) bool) int {
	dataDir := b.TempDir()
	env = agentEnv(append([]string{"CFE_AGENT_DATA_DIR=" + dataDir}, env...)...)
	if out, code := runCLI(b, env, "profile", "list"); code != 0 {
		b.Fatalf("profile list: exit %d\n%s", code, out)
	}
	cfgFile := filepath.Join(dataDir, "config.yaml")
	cfg, err := os.ReadFile(cfgFile)
	if err != nil {
		b.Fatal(err)
	}
	if !bytes.Contains(cfg, []byte("    printers:\n")) {
		b.Fatal("the default config.yaml has no printers")
	}
	cfg = bytes.Replace(cfg, []byte("    printers:\n"), []byte("    printers:\n"+printer), 1)
	cfg = bytes.Replace(cfg, []byte("    default_printer: archivo\n"), []byte("    default_printer: caja\n"), 1)
	if err := os.WriteFile(cfgFile, cfg, 0o600); err != nil {
		b.Fatal(err)
	}
	a := startAgent(b, env, "--listen", "127.0.0.1:0")
	defer a.stop(b)

	tr := &http.Transport{MaxIdleConnsPerHost: 1}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: time.Minute}
	example, err := os.ReadFile(filepath.Join("..", "..", "examples", "e-ticket.json"))
	if err != nil {
		b.Fatal(err)
	}
	var ticket map[string]json.RawMessage
	if err := json.Unmarshal(example, &ticket); err != nil {
		b.Fatal(err)
	}
	sale := func() {
		id := uuid.NewString()
		ticket["uuid"] = json.RawMessage(`"` + id + `"`)
		body, err := json.Marshal(ticket)
		if err != nil {
			b.Fatal(err)
		}
		if answer := postSale(b, client, a.baseURL+"/sign-cfe", body); !strings.Contains(answer.body, `"codigo_respuesta":"00"`) {
			b.Fatalf("POST /sign-cfe: %.300s", answer.body)
		}
		answer := postSale(b, client, a.baseURL+"/pdf", []byte(`{"uuid":"`+id+`","impresora":"caja"}`))
		if answer.status != http.StatusOK || answer.header.Get("X-CFE-Formato") != format {
			b.Fatalf("POST /pdf: HTTP %d, %v: %.300s", answer.status, answer.header, answer.body)
		}
	}
	made := 0
	waitIdle := func() {
		if idle != nil {
			cupsd.WaitFor(b, fmt.Sprintf("the printer's receipt of %d sales", made), func() bool { return idle(made) })
			time.Sleep(salePause)
		}
	}
	const warmUp = 10
	for range warmUp {
		waitIdle()
		sale()
		made++
	}
	var times []time.Duration
	for b.Loop() {
		b.StopTimer()
		waitIdle()
		b.StartTimer()
		start := time.Now()
		sale()
		times = append(times, time.Since(start))
		made++
	}
	slices.Sort(times)
	pct := func(p int) float64 {
		return float64(times[(p*len(times)+99)/100-1]) / float64(time.Millisecond)
	}
	b.ReportMetric(pct(50), "p50-ms")
	b.ReportMetric(pct(99), "p99-ms")
	return made
}

// salePause is the time left between two sales on a CUPS printer, once it
// has the previous one.
const salePause = 1500 * time.Millisecond

type saleAnswer struct {
	status int
	header http.Header
	body   string
}

// accept is the Accept header of the benchmark's POST /pdf; "" sends none
// (the PDF is answered).
var accept string

func postSale(b *testing.B, client *http.Client, url string, body []byte) saleAnswer {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if accept != "" && strings.HasSuffix(url, "/pdf") {
		req.Header.Set("Accept", accept)
	}
	resp, err := client.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		b.Fatal(err)
	}
	return saleAnswer{resp.StatusCode, resp.Header, string(got)}
}

func countFiles(dir string) int {
	n := 0
	_ = filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			n++
		}
		return nil
	})
	return n
}
