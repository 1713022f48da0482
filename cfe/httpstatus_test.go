package cfe

import (
	"net/http"
	"testing"
)

func TestCodeForHTTPStatus(t *testing.T) {
	tests := []struct {
		status int
		want   string
	}{
		{http.StatusBadRequest, EINVALID},
		{http.StatusRequestEntityTooLarge, EINVALID},
		{http.StatusUnprocessableEntity, EINVALID},
		{http.StatusMethodNotAllowed, EINVALID},
		{http.StatusUnauthorized, EUNAUTHORIZED},
		{http.StatusForbidden, EFORBIDDEN},
		{http.StatusNotFound, ENOTFOUND},
		{http.StatusConflict, ECONFLICT},
		{http.StatusTooManyRequests, EUNAVAILABLE},
		{http.StatusInternalServerError, EINTERNAL},
		{http.StatusBadGateway, EUNAVAILABLE},
		{http.StatusServiceUnavailable, EUNAVAILABLE},
		{http.StatusGatewayTimeout, EUNAVAILABLE},
		{599, EUNAVAILABLE},
		{http.StatusOK, EINTERNAL},
		{http.StatusFound, EINTERNAL},
		{0, EINTERNAL},
	}
	for _, tc := range tests {
		t.Run(http.StatusText(tc.status), func(t *testing.T) {
			if got := CodeForHTTPStatus(tc.status); got != tc.want {
				t.Errorf("CodeForHTTPStatus(%d) = %q, want %q", tc.status, got, tc.want)
			}
		})
	}
}
