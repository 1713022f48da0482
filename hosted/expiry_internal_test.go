package hosted

import (
	"encoding/json"
	"testing"
	"time"
)

// TestExpiryTime_UnmarshalJSON reads expires_at as the real service sends it
// (an integer Unix time) and as earlier sandboxes did (RFC 3339 text).
func TestExpiryTime_UnmarshalJSON(t *testing.T) {
	want := time.Date(2026, time.March, 2, 19, 0, 30, 0, time.UTC)
	for _, tt := range []struct {
		name, body string
		ok         bool
	}{
		{"unix integer", `{"expires_at": 1772478030}`, true},
		{"RFC 3339 text", `{"expires_at": "2026-03-02T19:00:30Z"}`, true},
		{"RFC 3339 with offset", `{"expires_at": "2026-03-02T16:00:30-03:00"}`, true},
		{"a fraction", `{"expires_at": 1772478030.5}`, false},
		{"not a date", `{"expires_at": "mañana"}`, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var tr tokenResponse
			err := json.Unmarshal([]byte(tt.body), &tr)
			switch {
			case tt.ok && err != nil:
				t.Fatalf("error %v", err)
			case !tt.ok && err == nil:
				t.Fatalf("accepted as %v", tr.ExpiresAt.Time)
			case tt.ok && !tr.ExpiresAt.Equal(want):
				t.Errorf("expires_at %v, want %v", tr.ExpiresAt.Time, want)
			}
		})
	}
}
