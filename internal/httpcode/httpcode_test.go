package httpcode_test

import (
	"net/http"
	"testing"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/httpcode"
)

// TestCode: a peer's HTTP status read back as a code.
func TestCode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		status int
		want   string
	}{
		{http.StatusBadRequest, cfe.EINVALID},
		{http.StatusRequestEntityTooLarge, cfe.EINVALID},
		{http.StatusUnprocessableEntity, cfe.EINVALID},
		{http.StatusMethodNotAllowed, cfe.EINVALID},
		{http.StatusUnauthorized, cfe.EUNAUTHORIZED},
		{http.StatusForbidden, cfe.EFORBIDDEN},
		{http.StatusNotFound, cfe.ENOTFOUND},
		{http.StatusConflict, cfe.ECONFLICT},
		{http.StatusTooManyRequests, cfe.EUNAVAILABLE},
		{http.StatusInternalServerError, cfe.EINTERNAL},
		{http.StatusBadGateway, cfe.EUNAVAILABLE},
		{http.StatusServiceUnavailable, cfe.EUNAVAILABLE},
		{http.StatusGatewayTimeout, cfe.EUNAVAILABLE},
		{599, cfe.EUNAVAILABLE},
		{http.StatusOK, cfe.EINTERNAL},
		{http.StatusFound, cfe.EINTERNAL},
		{0, cfe.EINTERNAL},
	}
	for _, tc := range tests {
		t.Run(http.StatusText(tc.status), func(t *testing.T) {
			t.Parallel()
			if got := httpcode.Code(tc.status); got != tc.want {
				t.Errorf("Code(%d) = %q, want %q", tc.status, got, tc.want)
			}
		})
	}
}

// TestStatus: each of cfe's codes is answered with its own status, an
// unknown code with 500; and each reads back as the same code (the two
// directions are one mapping).
func TestStatus(t *testing.T) {
	t.Parallel()
	tests := []struct {
		code string
		want int
	}{
		{cfe.EINVALID, http.StatusBadRequest},
		{cfe.ENOTFOUND, http.StatusNotFound},
		{cfe.ECONFLICT, http.StatusConflict},
		{cfe.EUNAUTHORIZED, http.StatusUnauthorized},
		{cfe.EFORBIDDEN, http.StatusForbidden},
		{cfe.EUNAVAILABLE, http.StatusServiceUnavailable},
		{cfe.EINTERNAL, http.StatusInternalServerError},
		{"", http.StatusInternalServerError},
		{"no_such_code", http.StatusInternalServerError},
	}
	for _, tc := range tests {
		t.Run(tc.code, func(t *testing.T) {
			t.Parallel()
			got := httpcode.Status(tc.code)
			if got != tc.want {
				t.Fatalf("Status(%q) = %d, want %d", tc.code, got, tc.want)
			}
			if tc.want != http.StatusInternalServerError || tc.code == cfe.EINTERNAL {
				if back := httpcode.Code(got); back != tc.code {
					t.Errorf("Code(Status(%q)) = %q: a client reads the server's answer as another code", tc.code, back)
				}
			}
		})
	}
}
