package localapi_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/localapi"
	"github.com/cfe-agent/cfe-agent/localapi/localclient"
)

func portOf(t *testing.T, s *localapi.Server) int {
	t.Helper()
	return s.Addr().(*net.TCPAddr).Port
}

func TestServer_Open(t *testing.T) {
	t.Run("loopback base URL carries the real port", func(t *testing.T) {
		ts := startServer(t, nil)
		port := portOf(t, ts.srv)
		if port == 0 {
			t.Fatal("listener has no port")
		}
		want := fmt.Sprintf("http://127.0.0.1:%d", port)
		if got := ts.srv.BaseURL(); got != want {
			t.Fatalf("BaseURL = %q, want %q", got, want)
		}
		st, err := ts.client.State(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if st.BaseURL != want || len(st.URLs) != 1 || st.URLs[0] != want {
			t.Fatalf("state base_url %q urls %v, want %q and [%q]", st.BaseURL, st.URLs, want, want)
		}
	})

	t.Run("specific IP", func(t *testing.T) {
		// Every 127/8 address is local on Linux; 127.0.0.2 stands for a
		// machine IP other than the default one.
		ts := startServer(t, func(c *localapi.ServerConfig) { c.Listen = "127.0.0.2:0" })
		want := fmt.Sprintf("http://127.0.0.2:%d", portOf(t, ts.srv))
		h, err := ts.client.Health(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if ts.srv.BaseURL() != want || h.BaseURL != want {
			t.Fatalf("BaseURL %q, health base_url %q, want %q", ts.srv.BaseURL(), h.BaseURL, want)
		}
	})

	t.Run("every interface", func(t *testing.T) {
		const token = "terminal-token-0123456789"
		ts := startServer(t, func(c *localapi.ServerConfig) {
			c.Listen = "0.0.0.0:0"
			// The machine's other addresses are not loopback: calls through
			// them are LAN calls, even from this machine.
			c.LAN = localapi.LANConfig{Enabled: true, Tokens: []string{token}}
		})
		port := portOf(t, ts.srv)
		want := fmt.Sprintf("http://0.0.0.0:%d", port)
		if ts.srv.BaseURL() != want {
			t.Fatalf("BaseURL = %q, want %q", ts.srv.BaseURL(), want)
		}
		st, err := ts.client.State(context.Background()) // the client dials 0.0.0.0, i.e. this machine
		if err != nil {
			t.Fatal(err)
		}
		if st.BaseURL != want {
			t.Fatalf("state base_url = %q, want %q", st.BaseURL, want)
		}
		if len(st.URLs) == 0 || st.URLs[0] != fmt.Sprintf("http://127.0.0.1:%d", port) {
			t.Fatalf("urls = %v, want loopback first", st.URLs)
		}
		for _, u := range st.URLs {
			pu, err := url.Parse(u)
			if err != nil || pu.Port() != strconv.Itoa(port) {
				t.Fatalf("url %q does not carry the port %d", u, port)
			}
			ip, err := netip.ParseAddr(pu.Hostname())
			if err != nil || !ip.Is4() {
				t.Fatalf("url %q does not name an IPv4 address", u)
			}
			// Independent check that the address belongs to this machine: it
			// can be bound.
			ln, err := net.Listen("tcp", net.JoinHostPort(ip.String(), "0"))
			if err != nil {
				t.Fatalf("url %q names an address this machine cannot bind: %v", u, err)
			}
			ln.Close()
			// And the module answers there, with that address as Host.
			c, err := localclient.New(u, localclient.Options{Token: token})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Health(context.Background()); err != nil {
				t.Fatalf("health at %s: %v", u, err)
			}
		}
	})

	t.Run("busy port fails at Open", func(t *testing.T) {
		first := startServer(t, nil)
		second := localapi.NewServer(localapi.ServerConfig{
			Listen: first.srv.Addr().String(),
			Issuer: funcIssuer(nil),
			State:  fixedState{},
		})
		err := second.Open()
		if err == nil {
			second.Close()
			t.Fatal("a second server on the same port opened")
		}
		if cfe.ErrorCode(err) != cfe.EUNAVAILABLE || !strings.Contains(cfe.ErrorMessage(err), "en uso") {
			t.Fatalf("Open error = %v (code %s), want EUNAVAILABLE saying the port is in use", err, cfe.ErrorCode(err))
		}
	})

	t.Run("invalid configuration", func(t *testing.T) {
		tests := []struct {
			name string
			cfg  localapi.ServerConfig
			want string
		}{
			{"not IP:port", localapi.ServerConfig{Listen: "localhost:18787", Issuer: funcIssuer(nil), State: fixedState{}}, "IP:port"},
			{"no issuer", localapi.ServerConfig{Listen: "127.0.0.1:0", State: fixedState{}}, "Issuer"},
			{"no state", localapi.ServerConfig{Listen: "127.0.0.1:0", Issuer: funcIssuer(nil)}, "StateSource"},
			{"LAN without tokens", localapi.ServerConfig{Listen: "127.0.0.1:0", Issuer: funcIssuer(nil), State: fixedState{},
				LAN: localapi.LANConfig{Enabled: true}}, "without tokens"},
			{"empty token", localapi.ServerConfig{Listen: "127.0.0.1:0", Issuer: funcIssuer(nil), State: fixedState{},
				LAN: localapi.LANConfig{Enabled: true, Tokens: []string{"0123456789abcdef", ""}}}, "empty"},
			{"wildcard origin", localapi.ServerConfig{Listen: "127.0.0.1:0", Issuer: funcIssuer(nil), State: fixedState{},
				AllowedOrigins: []string{"*"}}, "any page"},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				s := localapi.NewServer(tc.cfg)
				err := s.Open()
				if err == nil {
					s.Close()
					t.Fatal("Open accepted the configuration")
				}
				if !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("Open error %q does not mention %q", err, tc.want)
				}
				if s.Addr() != nil {
					t.Fatal("a refused configuration left a listener")
				}
			})
		}
	})

	t.Run("Close stops serving", func(t *testing.T) {
		ts := startServer(t, nil)
		base := ts.srv.BaseURL()
		if err := ts.srv.Close(); err != nil {
			t.Fatal(err)
		}
		if resp, err := http.Get(base + "/health"); err == nil {
			resp.Body.Close()
			t.Fatal("the server still answers after Close")
		}
	})
}
