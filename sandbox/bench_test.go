package sandbox_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/cfe-agent/cfe-agent/sandbox"
	"github.com/cfe-agent/cfe-agent/sandbox/issuing"
)

// keyBench is a key whose limits never stop a benchmark.
const keyBench = "xx_test_bench-known-key-000000000000009"

// benchClients is the number of concurrent clients of the benchmarks.
const benchClients = 8

// benchEnv runs a sandbox and returns a client that keeps a connection for
// each concurrent client.
func benchEnv(b *testing.B) (*env, *http.Client) {
	e := start(b, func(c *sandbox.Config) {
		c.Seed.APIKeys = append(c.Seed.APIKeys, sandbox.SeedKey{Empresa: rucAlfa, Nombre: "bench", Key: keyBench,
			LimitePorMinuto: 1_000_000, LimitePorHora: 1_000_000})
	})
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: benchClients}}
	b.Cleanup(client.CloseIdleConnections)
	// 8 goroutines whatever GOMAXPROCS is.
	b.SetParallelism((benchClients + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
	return e, client
}

// call sends one request and fails the benchmark unless it answers want.
func call(b *testing.B, client *http.Client, req *http.Request, want int) {
	res, err := client.Do(req)
	if err != nil {
		b.Error(err)
		return
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != want {
		b.Errorf("status %d, want %d", res.StatusCode, want)
	}
}

// BenchmarkEmit measures emitir (validate, number, sign with RSA-2048,
// commit to the store, record) with 8 concurrent clients.
func BenchmarkEmit(b *testing.B) {
	e, client := benchEnv(b)
	var n atomic.Int64
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			body, _ := json.Marshal(ticketRequest(fmt.Sprintf("bench-%d", n.Add(1))))
			req, _ := http.NewRequest("POST", e.url+"/api/v1/comprobante/emitir", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-API-Key", keyBench)
			call(b, client, req, http.StatusOK)
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}

// BenchmarkGetIssued measures a key-authenticated GET /api/v1/cfeemitido/{id}
// (key lookup, rate limit, record read) with 8 concurrent clients.
func BenchmarkGetIssued(b *testing.B) {
	e, client := benchEnv(b)
	var got issuing.ComprobanteResponse
	e.do("POST", "/api/v1/comprobante/emitir", ticketRequest("bench-get"), "X-API-Key", keyBench).expect(b, http.StatusOK).decode(b, &got)
	url := e.url + "/api/v1/cfeemitido/" + strconv.FormatInt(got.ID, 10)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req, _ := http.NewRequest("GET", url, nil)
			req.Header.Set("X-API-Key", keyBench)
			call(b, client, req, http.StatusOK)
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}
