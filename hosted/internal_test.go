package hosted

import (
	"net/http"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
)

func TestBackoff(t *testing.T) {
	// Attempt n waits between half and all of min(0.5 s × 2^(n-1), 1 min).
	for _, tt := range []struct {
		attempt  int
		low, top time.Duration
	}{
		{1, 250 * time.Millisecond, 500 * time.Millisecond},
		{2, 500 * time.Millisecond, time.Second},
		{4, 2 * time.Second, 4 * time.Second},
		{8, 30 * time.Second, time.Minute},
		{100, 30 * time.Second, time.Minute},
	} {
		for range 200 {
			if d := backoff(tt.attempt); d < tt.low || d > tt.top {
				t.Fatalf("backoff(%d) = %s, want within [%s, %s]", tt.attempt, d, tt.low, tt.top)
			}
		}
	}
}

func TestRateLimit_ExhaustedUntil(t *testing.T) {
	at := time.Date(2026, 11, 20, 13, 17, 42, 0, time.UTC)
	header := func(remMinute, remHour string) http.Header {
		h := http.Header{}
		h.Set(HeaderLimitMinute, "30")
		h.Set(HeaderRemainingMinute, remMinute)
		h.Set(HeaderLimitHour, "1000")
		h.Set(HeaderRemainingHour, remHour)
		return h
	}
	for _, tt := range []struct {
		name  string
		h     http.Header
		ok    bool
		until time.Time // zero when the key may go on
	}{
		{"headroom", header("5", "900"), true, time.Time{}},
		{"minute used up", header("0", "900"), true, time.Date(2026, 11, 20, 13, 18, 0, int(windowMargin), time.UTC)},
		{"hour used up", header("0", "0"), true, time.Date(2026, 11, 20, 14, 0, 0, int(windowMargin), time.UTC)},
		{"no headers (JWT)", http.Header{}, false, time.Time{}},
		{"garbled", header("x", "900"), false, time.Time{}},
		{"negative", header("-1", "900"), false, time.Time{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rl, ok := parseRateLimit(tt.h, at)
			if ok != tt.ok {
				t.Fatalf("parsed %v, want %v", ok, tt.ok)
			}
			until, exhausted := rl.exhaustedUntil()
			if !ok {
				return
			}
			if exhausted != !tt.until.IsZero() || !until.Equal(tt.until) {
				t.Errorf("until %s (%v), want %s", until, exhausted, tt.until)
			}
		})
	}
}

func TestParseAPIError(t *testing.T) {
	h := http.Header{"X-Request-Id": {"00aa11bb22cc33dd"}, "Retry-After": {"17"}}
	for _, tt := range []struct {
		name      string
		status    int
		body      string
		code      string
		message   string
		respuesta string
	}{
		{"common shape", 409, `{"error":"el uuid ya se usó","code":"conflict","details":[],"request_id":"ffee"}`,
			cfe.ECONFLICT, "el uuid ya se usó", ""},
		{"receipt rejection", 400, `{"CodRespuesta":"01","MensajeRespuesta":"Id de CFE referencia invalido","error":"x","code":"invalid"}`,
			cfe.EINVALID, "Id de CFE referencia invalido", "01"},
		{"PDF shape", 404, `{"ok":false,"error":"no existe el CFE"}`, cfe.ENOTFOUND, "no existe el CFE", ""},
		{"not JSON", 502, `<html>Bad Gateway</html>`, cfe.EUNAVAILABLE, "el servicio en la nube respondió HTTP 502", ""},
		{"rate limited", 429, `{"error":"límite","code":"api_key_rate_limit_exceeded"}`, cfe.EUNAVAILABLE, "límite", ""},
		{"internal", 500, `{"error":"error interno","code":"internal"}`, cfe.EINTERNAL, "error interno", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := parseAPIError(tt.status, h, []byte(tt.body))
			err := e.toError("op")
			if err.Code != tt.code || err.Message != tt.message || err.Respuesta != tt.respuesta || e.RetryAfter != 17*time.Second {
				t.Errorf("%+v / %+v", err, e)
			}
			if d, ok := RetryAfter(err); !ok || d != 17*time.Second {
				t.Errorf("RetryAfter = %s, %v", d, ok)
			}
		})
	}
}

// FuzzParseAPIError: any answer of the service gives an error with a message
// and a cfe code, never a panic.
func FuzzParseAPIError(f *testing.F) {
	f.Add(400, []byte(`{"error":"x","code":"invalid","details":[{"campo":"a","mensaje":"b"}]}`), "3")
	f.Add(429, []byte(`{"CodRespuesta":"01"}`), "Wed, 21 Oct 2026 07:28:00 GMT")
	f.Add(503, []byte{0xff, '{'}, "-5")
	f.Fuzz(func(t *testing.T, status int, body []byte, retry string) {
		e := parseAPIError(status, http.Header{"Retry-After": {retry}}, body).toError("op")
		if e.Message == "" || e.Code == "" || e.Err == nil {
			t.Fatalf("%+v", e)
		}
		if d, ok := RetryAfter(e); ok && d <= 0 {
			t.Fatalf("RetryAfter %s", d)
		}
	})
}
