package sandbox_test

import (
	"fmt"
	"net/http"
	"testing"
)

// chartBenchCFEs is how many CFEs the chart benchmark's window holds.
const chartBenchCFEs = 300

// BenchmarkChartMonthly measures graficaFacturacionMensual over a window of
// 300 CFEs (each record read and its signed XML parsed for the currency and
// MntTotal) with 8 concurrent clients.
func BenchmarkChartMonthly(b *testing.B) {
	e, client := benchEnv(b)
	for i := range chartBenchCFEs {
		e.do("POST", "/api/v1/comprobante/emitir", ticketRequest(fmt.Sprintf("chart-%d", i)), "X-API-Key", keyBench).expect(b, http.StatusOK)
	}
	url := e.url + "/api/v1/cfeemitido/graficaFacturacionMensual"
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
