package localapi

import (
	"net"
	"net/netip"
	"slices"
	"strings"
)

// endpoint is the effective listen address: the configured IP with the port
// the listener really got.
type endpoint struct {
	ip   netip.Addr
	port uint16
}

func (e endpoint) String() string { return netip.AddrPortFrom(e.ip, e.port).String() }

func (e endpoint) baseURL() string { return "http://" + e.String() }

// urls lists where the module can be reached: the base URL, or, on a wildcard
// address, one URL per local interface address of the listener's family,
// loopback first.
func (e endpoint) urls() []string {
	if !e.ip.IsUnspecified() {
		return []string{e.baseURL()}
	}
	addrs := interfaceAddrs(e.ip.Is4())
	// Loopback first, IPv4 before IPv6 among them; the rest keep the system's order.
	slices.SortStableFunc(addrs, func(a, b netip.Addr) int {
		return rank(a) - rank(b)
	})
	out := make([]string, 0, len(addrs))
	for _, a := range addrs {
		out = append(out, "http://"+netip.AddrPortFrom(a, e.port).String())
	}
	return out
}

func rank(a netip.Addr) int {
	switch {
	case a.IsLoopback() && a.Is4():
		return 0
	case a.IsLoopback():
		return 1
	}
	return 2
}

// interfaceAddrs returns the unicast addresses of the machine's interfaces
// that a URL can name: IPv4 only when only4, and never IPv6 link-local
// addresses, which need a zone.
func interfaceAddrs(only4 bool) []netip.Addr {
	ifaddrs, err := net.InterfaceAddrs()
	if err != nil {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}
	}
	var out []netip.Addr
	for _, ia := range ifaddrs {
		n, ok := ia.(*net.IPNet)
		if !ok {
			continue
		}
		a, ok := netip.AddrFromSlice(n.IP)
		if !ok {
			continue
		}
		a = a.Unmap()
		if (only4 && !a.Is4()) || a.IsLinkLocalUnicast() || a.IsMulticast() || a.IsUnspecified() {
			continue
		}
		out = append(out, a)
	}
	return out
}

// hostPolicy decides which Host header values name this listener.
type hostPolicy struct {
	names    map[string]bool // lower-case host names
	ips      map[netip.Addr]bool
	wildcard bool // listening on every interface: any local address is ours
	only4    bool
}

func newHostPolicy(listen netip.Addr, declared []string) hostPolicy {
	p := hostPolicy{
		names: map[string]bool{"localhost": true},
		ips: map[netip.Addr]bool{
			netip.MustParseAddr("127.0.0.1"): true,
			netip.IPv6Loopback():             true,
		},
		wildcard: listen.IsUnspecified(),
		only4:    listen.Is4(),
	}
	// The configured IP, even 0.0.0.0: a local client may dial the base URL
	// as reported, and that address reaches only this machine.
	p.ips[listen.Unmap()] = true
	for _, name := range declared {
		if ip, err := netip.ParseAddr(name); err == nil {
			p.ips[ip.Unmap()] = true
			continue
		}
		p.names[canonicalHost(name)] = true
	}
	return p
}

// allows reports whether hostport, a Host header value, names this listener.
// The port is not compared: only the host can be rebound.
func (p hostPolicy) allows(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	} else {
		host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	}
	if host == "" {
		return false
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return p.names[canonicalHost(host)]
	}
	ip = ip.Unmap()
	if p.ips[ip] {
		return true
	}
	// On a wildcard listener any current address of the machine is ours;
	// interfaces are read on each such request because DHCP may change them.
	return p.wildcard && slices.Contains(interfaceAddrs(p.only4), ip)
}

// canonicalHost lower-cases a host name and drops a trailing dot.
func canonicalHost(h string) string { return strings.TrimSuffix(strings.ToLower(h), ".") }
