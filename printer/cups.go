package printer

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"os/user"
	"strconv"
	"strings"
	"time"

	ipp "github.com/phin1x/go-ipp"
)

// CUPSConfig says how to reach a CUPS server.
type CUPSConfig struct {
	Host string // "" means localhost
	Port int    // 0 means 631
	User string // the requesting user; "" means the account the agent runs as
	// Wait is how long Print follows a job before it reports it as still
	// pending or processing; 0 means DefaultWait.
	Wait time.Duration
	// UntilAccepted makes Print answer as soon as the printer has the job
	// (CUPS reports it processing) instead of following it until it is
	// printed: a point of sale waits for the spooler, not for the paper. A
	// stopped printer or a failed job seen by then is still an error.
	UntilAccepted bool
}

// DefaultWait is how long Print follows a CUPS job by default: enough for a
// receipt printer to print, short enough for a cashier to wait.
const DefaultWait = 15 * time.Second

// CUPSServer is a CUPS server: the queues it offers and printers on them.
type CUPSServer struct {
	client        *ippClient
	wait          time.Duration
	poll          time.Duration
	untilAccepted bool
}

// NewCUPSServer returns a server reached as cfg says; without Host and
// Port, the one CUPS_SERVER names (EnvCUPSServer), else localhost:631.
func NewCUPSServer(cfg CUPSConfig) *CUPSServer {
	c := &ippClient{host: cfg.Host, port: cfg.Port, user: cfg.User,
		http: &http.Client{Transport: &http.Transport{
			DialContext:     (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
			MaxIdleConns:    4,
			IdleConnTimeout: time.Minute,
		}}}
	if c.host == "" {
		c.host = "localhost"
		if h, p, ok := serverFromEnv(); ok && c.port == 0 { // CUPS_SERVER, as lp reads it
			c.host, c.port = h, p
		}
	}
	if c.port == 0 {
		c.port = 631
	}
	if c.user == "" {
		c.user = "cfe-agent"
		if u, err := user.Current(); err == nil && u.Username != "" {
			c.user = u.Username
		}
	}
	s := &CUPSServer{client: c, wait: cfg.Wait, poll: 250 * time.Millisecond, untilAccepted: cfg.UntilAccepted}
	if s.wait == 0 {
		s.wait = DefaultWait
	}
	return s
}

// Printer returns the printer of a queue of this server.
func (s *CUPSServer) Printer(queue string) *CUPS { return &CUPS{server: s, Queue: queue} }

// CUPS prints on a CUPS queue over IPP (Print-Job) and follows the job
// until it completes (or, with CUPSConfig.UntilAccepted, until the printer
// has it), fails, or DefaultWait passes.
type CUPS struct {
	server *CUPSServer
	Queue  string
}

// Print sends the job with its copies and media as job attributes (where
// IPP puts Job Template attributes; go-ipp's own PrintJob also sends
// copies=1 among the operation attributes) and "print-scaling none", so
// that a page as wide as a roll prints at its size. It returns ENOTFOUND
// for a queue CUPS does not have; EUNAVAILABLE when CUPS cannot be reached,
// the queue does not accept jobs, the job is aborted, or the printer is
// stopped — then the job is cancelled, so that it does not print later
// unexpectedly, and the message carries the printer's reason.
func (p *CUPS) Print(ctx context.Context, job Job) (Result, error) {
	const op = "printer.CUPS.Print"
	job, err := job.normalize(op)
	if err != nil {
		return Result{}, err
	}
	c := p.server.client
	req := c.request(ipp.OperationPrintJob)
	req.OperationAttributes[ipp.AttributePrinterURI] = c.printerURI(p.Queue)
	req.OperationAttributes[ipp.AttributeJobName] = job.Name
	req.OperationAttributes[ipp.AttributeDocumentFormat] = "application/pdf"
	req.JobAttributes[ipp.AttributeCopies] = job.Copies
	req.JobAttributes[attrPrintScaling] = "none"
	if job.Media != "" {
		req.JobAttributes[ipp.AttributeMedia] = job.Media
	}
	id, err := c.submit(ctx, op, p, req, job.PDF)
	if err != nil {
		return Result{}, err
	}
	res := Result{Backend: BackendCUPS, Printer: p.Queue, JobID: strconv.Itoa(id), State: StatePending,
		Copies: job.Copies}
	return p.follow(ctx, op, id, res)
}

// refused explains why CUPS did not take a job.
func (p *CUPS) refused(op string, err error) error {
	var ie *ippError
	switch {
	case errors.As(err, &ie) && ie.status == ipp.StatusErrorNotFound:
		return notFound(op, err, "la impresora «%s» no existe en CUPS", p.Queue)
	case errors.As(err, &ie) && ie.status == ipp.StatusErrorNotAcceptingJobs:
		// The administrator's reason (cupsreject -r) is the printer's state message.
		_, reason := p.state(context.Background())
		return unavailable(op, err, "la impresora «%s» no acepta trabajos: %s", p.Queue, firstNonEmpty(reason, ie.message))
	case errors.As(err, &ie):
		return unavailable(op, err, "CUPS rechazó el trabajo para «%s»: %s", p.Queue, ie.message)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return unavailable(op, err, "se canceló la impresión en «%s» antes de enviarla", p.Queue)
	}
	return unavailable(op, err, "no se pudo conectar con CUPS en %s", strings.TrimPrefix(p.server.client.base(), "http://"))
}

// IPP job-state values.
const (
	jobPending    = 3
	jobHeld       = 4
	jobProcessing = 5
	jobStopped    = 6
	jobCanceled   = 7
	jobAborted    = 8
	jobCompleted  = 9
)

// follow polls the job until it ends or the wait is over: first after
// firstPoll, then twice as long each time up to the server's poll interval.
// CUPS takes a job into processing within milliseconds when its printer is
// idle; a point of sale that answers once the job is accepted then answers
// that soon, instead of a poll interval later.
func (p *CUPS) follow(ctx context.Context, op string, id int, res Result) (Result, error) {
	c := p.server.client
	deadline := time.Now().Add(p.server.wait)
	poll := min(firstPoll, p.server.poll)
	for {
		req := c.request(ipp.OperationGetJobAttributes)
		req.OperationAttributes[ipp.AttributePrinterURI] = c.printerURI(p.Queue)
		req.OperationAttributes[ipp.AttributeJobID] = id
		req.OperationAttributes[ipp.AttributeRequestedAttributes] = []string{ipp.AttributeJobState,
			attrJobStateReasons, attrJobStateMessage, attrJobPrinterStateMsg, ipp.AttributeCopies}
		resp, err := c.do(ctx, "/jobs", req)
		if err != nil || len(resp.JobAttributes) == 0 {
			return res, nil // accepted; its fate cannot be told now
		}
		attrs := resp.JobAttributes[0]
		if n, ok := firstInt(attrs, ipp.AttributeCopies); ok {
			res.Copies = n
		}
		state, _ := firstInt(attrs, ipp.AttributeJobState)
		switch state {
		case jobCompleted:
			res.State = StateCompleted
			return res, nil
		case jobCanceled, jobAborted:
			return res, unavailable(op, nil, "la impresora «%s» no imprimió el trabajo %d: %s", p.Queue, id, jobReason(attrs))
		case jobProcessing:
			res.State = StateProcessing
		default:
			res.State = StatePending
		}
		if stopped, reason := p.state(ctx); stopped || state == jobStopped {
			p.cancel(id)
			return res, unavailable(op, nil, "la impresora «%s» está detenida: %s; se canceló el trabajo %d",
				p.Queue, firstNonEmpty(reason, jobReason(attrs)), id)
		}
		if p.server.untilAccepted && state == jobProcessing {
			return res, nil
		}
		if time.Now().Add(poll).After(deadline) {
			return res, nil
		}
		select {
		case <-ctx.Done():
			return res, nil // the job is with CUPS, which will print it
		case <-time.After(poll):
		}
		poll = min(2*poll, p.server.poll)
	}
}

// firstPoll is how soon follow first asks CUPS about a job it took.
const firstPoll = 5 * time.Millisecond

// state reports whether the queue's printer is stopped, and its state
// message (or reasons).
func (p *CUPS) state(ctx context.Context) (stopped bool, reason string) {
	c := p.server.client
	req := c.request(ipp.OperationGetPrinterAttributes)
	req.OperationAttributes[ipp.AttributePrinterURI] = c.printerURI(p.Queue)
	req.OperationAttributes[ipp.AttributeRequestedAttributes] = []string{ipp.AttributePrinterState,
		ipp.AttributePrinterStateMessage, ipp.AttributePrinterStateReasons}
	resp, err := c.do(ctx, "/printers/"+url.PathEscape(p.Queue), req)
	if err != nil || len(resp.PrinterAttributes) == 0 {
		return false, ""
	}
	attrs := resp.PrinterAttributes[0]
	state, _ := firstInt(attrs, ipp.AttributePrinterState)
	return state == int(ipp.PrinterStateStopped), firstNonEmpty(firstString(attrs, ipp.AttributePrinterStateMessage),
		strings.Join(allStrings(attrs, ipp.AttributePrinterStateReasons), ", "))
}

// cancel cancels a job, whatever the caller's context: a job reported as
// failed must not print later.
func (p *CUPS) cancel(id int) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c := p.server.client
	req := c.request(ipp.OperationCancelJob)
	req.OperationAttributes[ipp.AttributePrinterURI] = c.printerURI(p.Queue)
	req.OperationAttributes[ipp.AttributeJobID] = id
	_, _ = c.do(ctx, "/jobs", req)
}

// jobReason is the most telling explanation CUPS gives of a job's state.
func jobReason(attrs ipp.Attributes) string {
	return firstNonEmpty(firstString(attrs, attrJobPrinterStateMsg), firstString(attrs, attrJobStateMessage),
		strings.Join(allStrings(attrs, attrJobStateReasons), ", "), "sin motivo informado")
}

func firstNonEmpty(values ...string) string {
	for _, v := range values {
		if v = strings.TrimSpace(v); v != "" && v != "none" {
			return v
		}
	}
	return ""
}

// Queue is a CUPS queue as Discover lists it.
type Queue struct {
	Name      string
	Info      string // description
	Location  string
	Model     string   // make and model
	State     string   // "idle", "processing" or "stopped"
	Reason    string   // the printer's state message, if any
	Reasons   []string // IPP's printer-state-reasons but "none" ("paused", "media-empty-error")
	Accepting bool     // accepts new jobs
	Default   bool     // the server's default destination
}

// Queues lists the server's queues. It returns EUNAVAILABLE when CUPS cannot
// be reached.
func (s *CUPSServer) Queues(ctx context.Context) ([]Queue, error) {
	const op = "printer.CUPSServer.Queues"
	c := s.client
	req := c.request(ipp.OperationCupsGetPrinters)
	req.OperationAttributes[ipp.AttributeRequestedAttributes] = []string{ipp.AttributePrinterName,
		ipp.AttributePrinterInfo, ipp.AttributePrinterLocation, ipp.AttributePrinterMakeAndModel,
		ipp.AttributePrinterState, ipp.AttributePrinterStateMessage, ipp.AttributePrinterIsAcceptingJobs,
		ipp.AttributePrinterStateReasons}
	resp, err := c.do(ctx, "/", req)
	var ie *ippError
	if errors.As(err, &ie) && ie.status == ipp.StatusErrorNotFound {
		return nil, nil // CUPS says "no printers"
	}
	if err != nil {
		return nil, unavailable(op, err, "no se pudo consultar CUPS en %s", strings.TrimPrefix(c.base(), "http://"))
	}
	def := s.defaultQueue(ctx)
	var out []Queue
	for _, a := range resp.PrinterAttributes {
		q := Queue{Name: firstString(a, ipp.AttributePrinterName), Info: firstString(a, ipp.AttributePrinterInfo),
			Location: firstString(a, ipp.AttributePrinterLocation), Model: firstString(a, ipp.AttributePrinterMakeAndModel),
			Reason: firstString(a, ipp.AttributePrinterStateMessage)}
		state, _ := firstInt(a, ipp.AttributePrinterState)
		q.State = map[int]string{3: "idle", 4: "processing", 5: "stopped"}[state]
		q.Accepting, _ = firstBool(a, ipp.AttributePrinterIsAcceptingJobs)
		for _, r := range allStrings(a, ipp.AttributePrinterStateReasons) {
			if r != "" && r != "none" {
				q.Reasons = append(q.Reasons, r)
			}
		}
		q.Default = q.Name != "" && q.Name == def
		out = append(out, q)
	}
	return out, nil
}

// defaultQueue is the server's default destination, or "".
func (s *CUPSServer) defaultQueue(ctx context.Context) string {
	req := s.client.request(ipp.OperationCupsGetDefault)
	req.OperationAttributes[ipp.AttributeRequestedAttributes] = []string{ipp.AttributePrinterName}
	resp, err := s.client.do(ctx, "/", req)
	if err != nil || len(resp.PrinterAttributes) == 0 {
		return ""
	}
	return firstString(resp.PrinterAttributes[0], ipp.AttributePrinterName)
}
