package printer

import (
	"net"
	"os"
	"strconv"
	"strings"
)

// EnvCUPSServer is the variable CUPS's own clients (lp, lpstat) read for the
// server to talk to: "host", "host:port" or "[v6]:port". A socket path is
// not used (the IPP client speaks TCP).
const EnvCUPSServer = "CUPS_SERVER"

// serverFromEnv is the host and port CUPS_SERVER names, so that the IPP
// client and the lp fallback reach the same server; ok is false when the
// variable is unset or names a socket.
func serverFromEnv() (host string, port int, ok bool) {
	return parseCUPSServer(os.Getenv(EnvCUPSServer))
}

// parseCUPSServer reads a value of CUPS_SERVER (see serverFromEnv).
func parseCUPSServer(v string) (host string, port int, ok bool) {
	v = strings.TrimSpace(v)
	if v == "" || strings.HasPrefix(v, "/") {
		return "", 0, false
	}
	if h, p, err := net.SplitHostPort(v); err == nil {
		n, err := strconv.Atoi(p)
		if err != nil || n <= 0 || n > 65535 {
			return "", 0, false
		}
		return h, n, true
	}
	return strings.Trim(v, "[]"), 0, true
}
