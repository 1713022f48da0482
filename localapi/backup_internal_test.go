package localapi

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestSameMachine: POST /backup's caller rule, on requests as the server
// builds them (RemoteAddr and the connection's local address); no socket is
// bound on a LAN address here.
func TestSameMachine(t *testing.T) {
	for _, tc := range []struct {
		name, remote, local string
		want                bool
	}{
		{"loopback v4", "127.0.0.1:50000", "127.0.0.1:18787", true},
		{"loopback v6", "[::1]:50000", "[::1]:18787", true},
		{"own LAN address", "192.168.1.5:50000", "192.168.1.5:18787", true},
		{"own address, v4-mapped", "[::ffff:192.168.1.5]:50000", "192.168.1.5:18787", true},
		{"another terminal", "192.168.1.9:50000", "192.168.1.5:18787", false},
		{"no local address", "192.168.1.5:50000", "", false},
		{"garbage", "nonsense", "192.168.1.5:18787", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/backup", nil)
			r.RemoteAddr = tc.remote
			if tc.local != "" {
				addr, err := net.ResolveTCPAddr("tcp", tc.local)
				if err != nil {
					t.Fatal(err)
				}
				r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, net.Addr(addr)))
			}
			if got := sameMachine(r); got != tc.want {
				t.Fatalf("sameMachine(%s → %s) = %v, want %v", tc.remote, tc.local, got, tc.want)
			}
		})
	}
}
