package main

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
)

// defaultBody is the request sent when -body is not given: the e-Ticket of
// examples/e-ticket.json (a test keeps the two identical).
//
//go:embed e-ticket.json
var defaultBody []byte

// maxAnswer bounds how much of an answer is read: a signed e-Ticket answer is
// about 5 KB.
const maxAnswer = 1 << 20

// loadConfig says what load to put on a local module and for how long.
type loadConfig struct {
	baseURL  string        // the agent's base URL, such as http://127.0.0.1:18787
	conns    int           // connections, each with one request in flight
	duration time.Duration // no request starts after this
	total    int           // when > 0, no more than this many requests
	rate     float64       // when > 0, open loop: this many requests per second (openloop.go)
	timeout  time.Duration // for each request
	token    string        // LAN token, sent as "Authorization: Bearer"
	body     bodyTemplate
}

// summary is what a load run saw.
type summary struct {
	requests    int            // requests completed, failed ones included
	signed      int            // requests answered codigo_respuesta "00"
	answered2xx int            // requests answered with a 2xx status, signed or not
	errors      map[string]int // failed requests by kind
	errorSample map[string]string
	elapsed     time.Duration // from the first request to the last answer
	interrupted bool          // stopped early by a signal
	latency     latencyStats  // of the requests that got an HTTP answer
	numbers     []seriesCheck // of the signed requests
	// Open loop only: the requests planned, and the start delays (start
	// minus due time) of those sent, of which late started over lateAfter
	// after their due time.
	openLoop  bool
	scheduled int
	delays    latencyStats
	late      int
}

// ok reports whether the run signed something, with no failed request and
// with distinct, gap-free numbers in every series.
func (s *summary) ok() bool {
	if s.signed == 0 || len(s.errors) > 0 {
		return false
	}
	for _, c := range s.numbers {
		if !c.ok() {
			return false
		}
	}
	return true
}

// throughput is the completed requests per second.
func (s *summary) throughput() float64 {
	if s.elapsed <= 0 {
		return 0
	}
	return float64(s.requests) / s.elapsed.Seconds()
}

// runLoad checks that the agent is healthy, then keeps cfg.conns signing
// requests in flight until cfg.duration has passed, cfg.total requests were
// sent, or ctx ends. Requests in flight always finish (within cfg.timeout):
// cutting one short could leave a number signed but never seen. It returns an
// error only when the run could not start.
func runLoad(ctx context.Context, cfg loadConfig) (*summary, error) {
	base := strings.TrimSuffix(cfg.baseURL, "/")
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = cfg.conns
	tr.MaxConnsPerHost = cfg.conns
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: cfg.timeout}

	if err := checkHealth(ctx, client, base, cfg.token); err != nil {
		return nil, err
	}

	if cfg.rate > 0 {
		return runScheduled(ctx, client, base, cfg), nil
	}
	start := time.Now()
	deadline := start.Add(cfg.duration)
	var sent atomic.Int64
	more := func() bool {
		if ctx.Err() != nil || !time.Now().Before(deadline) {
			return false
		}
		return cfg.total <= 0 || sent.Add(1) <= int64(cfg.total)
	}
	perConn := make([][]sample, cfg.conns)
	var wg sync.WaitGroup
	for i := range perConn {
		wg.Go(func() {
			// In-flight requests outlive ctx; see above.
			reqCtx := context.WithoutCancel(ctx)
			for more() {
				perConn[i] = append(perConn[i], sign(reqCtx, client, base, cfg))
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	s := summarize(perConn)
	s.elapsed = elapsed
	s.interrupted = ctx.Err() != nil
	return s, nil
}

// runScheduled is runLoad's open loop (openloop.go).
func runScheduled(ctx context.Context, client *http.Client, base string, cfg loadConfig) *summary {
	reqCtx := context.WithoutCancel(ctx) // in-flight requests outlive ctx, as in runLoad
	sched := newSchedule(time.Now(), cfg.rate, cfg.duration, cfg.total)
	perConn := runOpenLoop(ctx, sched, cfg.conns, waitUntil, func() sample { return sign(reqCtx, client, base, cfg) })
	s := summarize(perConn)
	s.elapsed = time.Since(sched.start)
	s.interrupted = ctx.Err() != nil
	s.openLoop, s.scheduled = true, sched.count
	return s
}

// checkHealth asks GET /health once: the run starts only on a healthy agent.
func checkHealth(ctx context.Context, client *http.Client, base, token string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/health", nil)
	if err != nil {
		return err
	}
	authorize(req, token)
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("agent not reachable: %w", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("agent not healthy: GET /health answered %d: %s", resp.StatusCode, clip(b))
	}
	return nil
}

func authorize(req *http.Request, token string) {
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
}

// sample is one request's outcome.
type sample struct {
	latency  time.Duration // to the end of the answer, from the send or, in open loop, from the due time
	answered bool          // an HTTP answer was read
	status   int           // its HTTP status, when answered
	// Open loop only: when the request was due, and how long after that it
	// started.
	due   time.Time
	delay time.Duration
	outcome
}

// sign sends one signing request under a fresh uuid.
func sign(ctx context.Context, client *http.Client, base string, cfg loadConfig) sample {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/sign-cfe",
		bytes.NewReader(cfg.body.with(uuid.NewString())))
	if err != nil {
		return sample{outcome: failed("request", err.Error())}
	}
	req.Header.Set("Content-Type", "application/json")
	authorize(req, cfg.token)
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return sample{latency: time.Since(start), outcome: failed("transport", err.Error())}
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	resp.Body.Close()
	latency := time.Since(start)
	if err != nil {
		return sample{latency: latency, outcome: failed("transport", err.Error())}
	}
	return sample{latency: latency, answered: true, status: resp.StatusCode, outcome: judge(resp.StatusCode, b)}
}

// outcome is what one request came to: a signed number, or a failure of some
// kind.
type outcome struct {
	kind   string // of failure; "" when signed
	detail string // of the failure, for the report
	series series
	numero int64
}

func failed(kind, detail string) outcome { return outcome{kind: kind, detail: detail} }

// judge reads the answer of POST /sign-cfe. Only a 200 with codigo_respuesta
// "00" and the full folio (tipo_cfe, serie, numero) counts as signed.
func judge(status int, body []byte) outcome {
	if status != http.StatusOK {
		return failed(fmt.Sprintf("HTTP %d", status), clip(body))
	}
	var a struct {
		Codigo  string `json:"codigo_respuesta"`
		Mensaje string `json:"mensaje_respuesta"`
		TipoCFE int    `json:"tipo_cfe"`
		Serie   string `json:"serie"`
		Numero  int64  `json:"numero"`
	}
	if err := json.Unmarshal(body, &a); err != nil {
		return failed("unreadable answer", err.Error())
	}
	switch {
	case a.Codigo != "00":
		return failed("codigo_respuesta "+a.Codigo, a.Mensaje)
	case a.TipoCFE <= 0 || a.Serie == "" || a.Numero <= 0:
		return failed("signed answer without folio", clip(body))
	}
	return outcome{series: series{a.TipoCFE, a.Serie}, numero: a.Numero}
}

// clip shortens an answer body for the report.
func clip(b []byte) string {
	const n = 200
	s := strings.TrimSpace(string(b))
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}

// summarize counts the samples of every connection and checks the numbers.
func summarize(perConn [][]sample) *summary {
	s := &summary{errors: map[string]int{}, errorSample: map[string]string{}}
	var lat, delays []time.Duration
	nums := map[series][]int64{}
	for _, samples := range perConn {
		for _, x := range samples {
			s.requests++
			if x.answered {
				lat = append(lat, x.latency)
				if x.status >= 200 && x.status <= 299 {
					s.answered2xx++
				}
			}
			if !x.due.IsZero() {
				delays = append(delays, x.delay)
				if x.delay > lateAfter {
					s.late++
				}
			}
			if x.kind != "" {
				if s.errors[x.kind]++; s.errors[x.kind] == 1 {
					s.errorSample[x.kind] = x.detail
				}
				continue
			}
			s.signed++
			nums[x.series] = append(nums[x.series], x.numero)
		}
	}
	s.latency = latencies(lat)
	s.delays = latencies(delays)
	s.numbers = checkNumbers(nums)
	return s
}

// bodyTemplate makes signing requests that differ only in their uuid.
type bodyTemplate struct {
	// rest is the request object without its uuid member, re-encoded.
	rest []byte
}

// newBodyTemplate reads a signing request: a JSON object, with or without a
// uuid (the one it has is replaced on every request).
func newBodyTemplate(b []byte) (bodyTemplate, error) {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(b, &members); err != nil {
		return bodyTemplate{}, fmt.Errorf("the body is not a JSON object: %w", err)
	}
	if members == nil {
		return bodyTemplate{}, errors.New("the body is null, not a JSON object")
	}
	delete(members, "uuid")
	rest, err := json.Marshal(members)
	if err != nil {
		return bodyTemplate{}, err
	}
	return bodyTemplate{rest: rest}, nil
}

// with returns the request under the given uuid.
func (t bodyTemplate) with(id string) []byte {
	// rest is "{}" or "{...}": put the uuid member first.
	b := make([]byte, 0, len(t.rest)+len(id)+12)
	b = append(b, `{"uuid":"`...)
	b = append(b, id...)
	b = append(b, '"')
	if len(t.rest) > 2 {
		b = append(b, ',')
	}
	return append(b, t.rest[1:]...)
}
