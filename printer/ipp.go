package printer

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync/atomic"

	ipp "github.com/phin1x/go-ipp"
)

// go-ipp encodes only the attributes whose value tag it knows; print-scaling
// (PWG 5100.13, a keyword) is not among them.
func init() { ipp.AttributeTagMapping[attrPrintScaling] = ipp.TagKeyword }

// IPP attributes go-ipp has no constant for (or a wrong one).
const (
	attrPrintScaling        = "print-scaling"
	attrJobStateReasons     = "job-state-reasons" // go-ipp's AttributeJobStateReason lacks the "s"
	attrJobStateMessage     = "job-state-message"
	attrJobPrinterStateMsg  = "job-printer-state-message" // CUPS: the backend's last message for the job
	attrPrinterURISupported = "printer-uri-supported"
)

// ippClient talks IPP over HTTP to a CUPS server. go-ipp encodes and decodes
// the messages; the transport is ours, to honour contexts and to accept
// IPP's "successful-ok-*" statuses that go-ipp's adapter reports as errors.
type ippClient struct {
	host string
	port int
	user string
	http *http.Client
	seq  atomic.Int32
}

// ippError is a response whose status is not successful.
type ippError struct {
	status  int16
	message string
}

func (e *ippError) Error() string { return fmt.Sprintf("IPP status 0x%04x: %s", e.status, e.message) }

func (c *ippClient) base() string {
	return "http://" + net.JoinHostPort(c.host, strconv.Itoa(c.port))
}

// printerURI names a queue of this server.
func (c *ippClient) printerURI(queue string) string {
	return "ipp://" + net.JoinHostPort(c.host, strconv.Itoa(c.port)) + "/printers/" + queue
}

// request makes a request with the operation attributes every call has.
func (c *ippClient) request(op int16) *ipp.Request {
	req := ipp.NewRequest(op, c.seq.Add(1))
	req.OperationAttributes[ipp.AttributeRequestingUserName] = c.user
	return req
}

// do sends req to path (e.g. "/printers/Q") and returns the response, or an
// *ippError when its status is an error (0x0400 and above).
func (c *ippClient) do(ctx context.Context, path string, req *ipp.Request) (*ipp.Response, error) {
	payload, err := req.Encode()
	if err != nil {
		return nil, err
	}
	var body io.Reader = bytes.NewReader(payload)
	size := int64(len(payload))
	if req.File != nil {
		body = io.MultiReader(body, req.File)
		size += int64(req.FileSize)
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base()+path, body)
	if err != nil {
		return nil, err
	}
	hreq.ContentLength = size
	hreq.Header.Set("Content-Type", ipp.ContentTypeIPP)
	hresp, err := c.http.Do(hreq)
	if err != nil {
		return nil, err
	}
	defer hresp.Body.Close()
	if hresp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("CUPS answered HTTP %d", hresp.StatusCode)
	}
	resp, err := ipp.NewResponseDecoder(hresp.Body).Decode(nil)
	if err != nil {
		return nil, fmt.Errorf("reading CUPS's answer: %w", err)
	}
	if resp.StatusCode >= 0x0400 {
		e := &ippError{status: resp.StatusCode}
		e.message = firstString(resp.OperationAttributes, ipp.AttributeStatusMessage)
		return resp, e
	}
	return resp, nil
}

// firstString returns the first value of a text or keyword attribute.
func firstString(attrs ipp.Attributes, name string) string {
	if vs := attrs[name]; len(vs) > 0 {
		if s, ok := vs[0].Value.(string); ok {
			return s
		}
	}
	return ""
}

// strings returns every value of a keyword attribute.
func allStrings(attrs ipp.Attributes, name string) []string {
	var out []string
	for _, v := range attrs[name] {
		if s, ok := v.Value.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// firstInt returns the first value of an integer or enum attribute.
func firstInt(attrs ipp.Attributes, name string) (int, bool) {
	if vs := attrs[name]; len(vs) > 0 {
		if n, ok := vs[0].Value.(int); ok {
			return n, true
		}
	}
	return 0, false
}

// firstBool returns the first value of a boolean attribute.
func firstBool(attrs ipp.Attributes, name string) (bool, bool) {
	if vs := attrs[name]; len(vs) > 0 {
		if b, ok := vs[0].Value.(bool); ok {
			return b, true
		}
	}
	return false, false
}

// submit sends a Print-Job request with body as its document to p's queue and
// returns the job id CUPS gave it: p.refused's errors when CUPS refuses it,
// EUNAVAILABLE when it accepts it without an id.
func (c *ippClient) submit(ctx context.Context, op string, p *CUPS, req *ipp.Request, body []byte) (int, error) {
	req.File, req.FileSize = bytes.NewReader(body), len(body)
	resp, err := c.do(ctx, "/printers/"+url.PathEscape(p.Queue), req)
	if err != nil {
		return 0, p.refused(op, err)
	}
	var id int
	if len(resp.JobAttributes) > 0 {
		id, _ = firstInt(resp.JobAttributes[0], ipp.AttributeJobID)
	}
	if id == 0 {
		return 0, unavailable(op, nil, "CUPS aceptó el trabajo para «%s» sin darle un número", p.Queue)
	}
	return id, nil
}
