package main

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/cfe-agent/cfe-agent/localapi"
)

// Reachability checks of the hosted service.
const (
	hostedProbeInterval = time.Minute
	hostedProbeTimeout  = 10 * time.Second
)

// hostedProbe tells whether the profile's hosted service answers: any HTTP
// answer counts, a network error or a timeout does not. It stands in until
// the outbox's deliveries report the same thing from real requests.
type hostedProbe struct {
	baseURL string
	client  *http.Client

	mu   sync.Mutex
	last localapi.Hosted
}

func newHostedProbe(baseURL string) *hostedProbe {
	return &hostedProbe{
		baseURL: baseURL,
		client:  &http.Client{Timeout: hostedProbeTimeout},
		last:    localapi.Hosted{BaseURL: baseURL},
	}
}

// run checks at once, then every interval, until ctx ends.
func (p *hostedProbe) run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		p.check(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (p *hostedProbe) check(ctx context.Context) {
	reachable := false
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(p.baseURL, "/")+"/", nil)
	if err == nil {
		var resp *http.Response
		if resp, err = p.client.Do(req); err == nil {
			resp.Body.Close()
			reachable = true
		}
	}
	if ctx.Err() != nil {
		return // stopped, not unreachable
	}
	p.mu.Lock()
	p.last.CheckedAt, p.last.Reachable = time.Now(), reachable
	p.mu.Unlock()
}

// status returns the last check; nil when p is nil (no hosted service).
func (p *hostedProbe) status() *localapi.Hosted {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	h := p.last
	return &h
}
