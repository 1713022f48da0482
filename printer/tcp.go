package printer

import (
	"context"
	"net"
	"time"
)

// TCP prints raw jobs on a network printer's raw port (9100, "JetDirect"),
// asking it for its real-time status before and after the job when Status
// is set.
type TCP struct {
	Address string // host:port; a host alone means port 9100
	Status  bool   // ask DLE EOT before and after the job
	// Timeout bounds the connection and the writing; 0 means 10 seconds.
	Timeout time.Duration
}

// PrintRaw connects, checks that the printer has paper and its cover is
// closed (with Status), writes every copy, and checks again: the job is
// accepted when the printer has taken the bytes and still reports no
// problem. It returns EUNAVAILABLE, with the reason, when the printer cannot
// be reached, does not answer, or reports paper end, an open cover or an
// error — before the job nothing was sent.
func (p *TCP) PrintRaw(ctx context.Context, job RawJob) (Result, error) {
	const op = "printer.TCP.PrintRaw"
	job, err := job.normalize(op)
	if err != nil {
		return Result{}, err
	}
	addr := tcpAddress(p.Address)
	timeout := p.Timeout
	if timeout == 0 {
		timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
	if err != nil {
		return Result{}, unavailable(op, err, "no se pudo conectar con la impresora en %s", addr)
	}
	defer func() { _ = conn.Close() }()
	if d, ok := ctx.Deadline(); ok {
		_ = conn.SetWriteDeadline(d)
	}
	who := "en " + addr
	if p.Status {
		if _, err := checkStatus(op, conn, who, ""); err != nil {
			return Result{}, err
		}
	}
	if _, err := conn.Write(job.payload()); err != nil {
		return Result{}, unavailable(op, err, "la impresora en %s cortó la conexión durante el envío", addr)
	}
	if p.Status {
		if _, err := checkStatus(op, conn, who, " durante la impresión"); err != nil {
			return Result{}, err
		}
	}
	return Result{Backend: BackendTCP, Printer: addr, State: StateProcessing, Copies: job.Copies}, nil
}

// tcpAddress adds the raw port to an address without one.
func tcpAddress(a string) string {
	if _, _, err := net.SplitHostPort(a); err != nil {
		return net.JoinHostPort(a, "9100")
	}
	return a
}

// Check connects to the printer and, with Status, asks its status; it
// prints nothing. It returns nil when the printer can take a job, and
// PrintRaw's errors otherwise.
func (p *TCP) Check(ctx context.Context) error {
	const op = "printer.TCP.Check"
	addr := tcpAddress(p.Address)
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
	if err != nil {
		return unavailable(op, err, "no se pudo conectar con la impresora en %s", addr)
	}
	defer func() { _ = conn.Close() }()
	if p.Status {
		_, err = checkStatus(op, conn, "en "+addr, "")
	}
	return err
}
