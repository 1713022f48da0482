//go:build linux

package main_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"golang.org/x/sys/unix"

	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
	"github.com/cfe-agent/cfe-agent/localapi/localclient"
)

// The local module's LAN limits (localapi/lanthrottle.go): wrong tokens per
// IPv6 /64 and over all LAN callers, per minute.
const (
	lanPrefixFailures = 30
	lanTotalFailures  = 60
	lanFailureWindow  = time.Minute
)

// Guessers in TestAgent_LANGuessingHeldToCeiling: 8 /64 prefixes of 128
// addresses each.
const (
	guessPrefixes    = 8
	guessPerPrefix   = 128
	guessSources     = guessPrefixes * guessPerPrefix
	guessRounds      = 3  // each source guesses at least this many times
	guessWorkers     = 48 // requests in flight
	guessDialThreads = 6  // threads dialing from the namespace
)

// TestAgent_LANGuessingHeldToCeiling runs the real agent in LAN mode on an
// IPv6 address and guesses its token from 1 024 other IPv6 addresses (8 /64
// prefixes) of a network namespace, several times each, as fast as the
// agent answers. The test counts every answer itself: the wrong tokens told
// apart from a right one (401, not 429) stay within the ceiling of 60 a
// minute (its burst of 60 plus what it earns back over the attack's span),
// each /64 within its 30; and two terminals that presented their token
// before the attack, one of them inside a guessing /64, keep signing during
// it, with numbers that follow each other (no guess used one). It needs
// root and ip(8).
func TestAgent_LANGuessingHeldToCeiling(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		if os.Getenv("CFE_STRICT_TOOLS") == "1" {
			t.Fatal("network namespaces need root (CFE_STRICT_TOOLS=1)")
		}
		t.Skip("creating network namespaces needs root")
	}
	ipTool := testtool.Require(t, "ip")
	net6 := setupGuessNetns(t, ipTool)

	token, _ := runCLI(t, agentEnv(), "lan", "token")
	token = strings.TrimSpace(token)
	dataDir := t.TempDir()
	p := startProc(t, procEnv(t, dataDir, "CFE_AGENT_LAN_ENABLED=true", "CFE_AGENT_LAN_TOKENS="+token,
		"CFE_AGENT_LISTEN=["+net6.agent.String()+"]:0"), "serve")
	if !strings.HasPrefix(p.baseURL, "http://["+net6.agent.String()+"]:") {
		t.Fatalf("the agent listens on %s, want [%s]", p.baseURL, net6.agent)
	}

	dialer := newNSDialer(t, net6.ns, guessDialThreads)
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		DisableKeepAlives: true, // a new connection, so a new source address, for every request
		DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
			return dialer.dial(ctx, ctx.Value(sourceKey{}).(netip.Addr), addr)
		},
	}}
	body := example(t, "e-ticket.json")

	// The terminals present their token before the attack: A from a /64 of
	// its own, B from inside the first guessing /64. A signs once.
	terminal := func(src netip.Addr) *localclient.Client {
		c, err := localclient.New(p.baseURL, localclient.Options{Token: token, HTTPClient: &http.Client{
			Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true,
				DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) { return dialer.dial(ctx, src, addr) }}}})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	termA, termB := terminal(net6.terminalA), terminal(net6.terminalB)
	sign := func(c *localclient.Client) *apitype.SignResponse {
		t.Helper()
		b := regexp.MustCompile(`"uuid": "[^"]+"`).ReplaceAll(body, []byte(`"uuid": "`+uuid.NewString()+`"`))
		resp, err := c.SignCFE(context.Background(), b)
		if err != nil || resp.CodigoRespuesta != "00" {
			t.Fatalf("a terminal's signing: %v %+v", err, resp)
		}
		return resp
	}
	if _, err := termB.State(context.Background()); err != nil {
		t.Fatalf("terminal B before the attack: %v", err)
	}
	numbers := []int64{sign(termA).Numero}

	// The attack: every source in turn, round after round, until told to
	// stop once each has guessed guessRounds times and the terminals are done.
	var (
		next        atomic.Int64 // the next guess to send
		mu          sync.Mutex
		byStatus    = map[int]int{}
		accepted    = map[netip.Prefix]int{} // 401 answers per /64
		ceilingSeen = make(chan struct{})
		seenOnce    sync.Once
		enough      = make(chan struct{}) // closed once every source has sent guessRounds guesses
		failures    []string
	)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	start := time.Now()
	for range guessWorkers {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				i := next.Add(1) - 1
				if i == guessSources*guessRounds {
					close(enough)
				}
				src := net6.guessers[i%guessSources]
				status, text, err := guess(client, p.baseURL, src, body)
				mu.Lock()
				switch {
				case err != nil:
					failures = append(failures, err.Error())
				case status == http.StatusUnauthorized:
					accepted[netip.PrefixFrom(src, 64).Masked()]++
				case status == http.StatusTooManyRequests:
					if strings.Contains(text, "en la red local") {
						seenOnce.Do(func() { close(ceilingSeen) })
					}
				}
				byStatus[status]++
				mu.Unlock()
			}
		})
	}
	select {
	case <-ceilingSeen:
	case <-time.After(2 * time.Minute):
		close(stop)
		wg.Wait()
		t.Fatalf("the ceiling was never reached: answers %v, errors %.5q", byStatus, failures)
	}
	// During the attack both terminals sign, A and B at once.
	var tw sync.WaitGroup
	var termMu sync.Mutex
	for _, c := range []*localclient.Client{termA, termB} {
		tw.Go(func() {
			for range 3 {
				n := sign(c).Numero
				termMu.Lock()
				numbers = append(numbers, n)
				termMu.Unlock()
			}
		})
	}
	tw.Wait()
	select {
	case <-enough:
	case <-time.After(3 * time.Minute):
		t.Errorf("the attack did not send %d guesses in 3 minutes", guessSources*guessRounds)
	}
	close(stop)
	wg.Wait()
	span := time.Since(start)

	total401 := byStatus[http.StatusUnauthorized]
	sent := 0
	for _, n := range byStatus {
		sent += n
	}
	t.Logf("%d guesses from %d sources in %s: %v; told apart per /64: %v", sent, guessSources, span.Round(time.Millisecond),
		byStatus, accepted)
	if len(failures) > 0 {
		t.Fatalf("%d guesses got no answer: %.3q", len(failures), failures)
	}
	if sent < guessSources*guessRounds || byStatus[http.StatusUnauthorized]+byStatus[http.StatusTooManyRequests] != sent {
		t.Fatalf("answers %v to %d guesses: want only 401 and 429, and at least %d guesses", byStatus, sent, guessSources*guessRounds)
	}
	// A tier's allowance over the span: its burst, plus what it earns back
	// (rounded up), plus one for the try being earned when the span ends.
	allowance := func(burst int) int {
		return burst + int(math.Ceil(span.Seconds()*float64(burst)/lanFailureWindow.Seconds())) + 1
	}
	// The /64 of terminal B is trusted (B presented its token): its guessers
	// are held by its prefix tier, not the ceiling; all other sources
	// together by the ceiling.
	trusted := netip.PrefixFrom(net6.terminalB, 64).Masked()
	held := total401 - accepted[trusted]
	if held > allowance(lanTotalFailures) || held < lanTotalFailures {
		t.Fatalf("%d wrong tokens told apart from the untrusted /64s in %s, want between the burst %d and the ceiling's %d",
			held, span, lanTotalFailures, allowance(lanTotalFailures))
	}
	if total401 > allowance(lanTotalFailures)+allowance(lanPrefixFailures) {
		t.Fatalf("%d wrong tokens told apart in all, more than the ceiling's %d and the trusted /64's %d",
			total401, allowance(lanTotalFailures), allowance(lanPrefixFailures))
	}
	for pfx, n := range accepted {
		if n > allowance(lanPrefixFailures) {
			t.Errorf("%v: %d wrong tokens told apart, more than its %d", pfx, n, allowance(lanPrefixFailures))
		}
	}
	// The terminals' seven CFEs took seven numbers in a row.
	slices.Sort(numbers)
	for i, n := range numbers {
		if n != numbers[0]+int64(i) {
			t.Fatalf("the terminals' numbers %v do not follow each other", numbers)
		}
	}
	logs := p.stderr.String()
	if !strings.Contains(logs, "LAN failed-token ceiling reached") {
		t.Error("the agent did not log the ceiling")
	}
	if strings.Contains(logs, token) {
		t.Error("the token reached the agent's log")
	}
}

// sourceKey carries a guess's source address in its request's context.
type sourceKey struct{}

// guess sends POST /sign-cfe with a random wrong token from src and returns
// the answer's status and body.
func guess(client *http.Client, base string, src netip.Addr, body []byte) (int, string, error) {
	ctx := context.WithValue(context.Background(), sourceKey{}, src)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/sign-cfe", bytes.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+hex.EncodeToString(b[:]))
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", fmt.Errorf("from %s: %w", src, err)
	}
	defer resp.Body.Close()
	text, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, "", fmt.Errorf("from %s: %w", src, err)
	}
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusTooManyRequests {
		var sr apitype.SignResponse
		if err := json.Unmarshal(text, &sr); err != nil || sr.CodigoRespuesta != "01" {
			return 0, "", fmt.Errorf("from %s: HTTP %d, body %.200s not in the sign-cfe shape", src, resp.StatusCode, text)
		}
	}
	return resp.StatusCode, string(text), nil
}

// guessNet is the network of TestAgent_LANGuessingHeldToCeiling.
type guessNet struct {
	ns        string       // the namespace of the guessers and terminals
	agent     netip.Addr   // the agent's address, this side of the veth pair
	guessers  []netip.Addr // guessSources addresses in guessPrefixes /64s
	terminalA netip.Addr   // in a /64 of its own
	terminalB netip.Addr   // in the first guessers' /64
}

// guessNetSeq numbers the calls of setupGuessNetns in this process.
var guessNetSeq atomic.Int32

// setupGuessNetns makes a namespace linked to this one by a veth pair: the
// agent's side has P::1/64, the namespace's P::2/64, where P is a /64 of
// fd5c:fe00:N::/48 (N from the process id and a sequence); the guessers' and terminals'
// addresses are on the namespace's loopback, in other /64s of the /48,
// which this side routes through P::2 (so the kernel keeps one neighbour,
// not a thousand). Everything goes when the test ends.
func setupGuessNetns(t *testing.T, ipTool string) guessNet {
	t.Helper()
	// Names and the /48 are new for every call: the kernel destroys a
	// deleted namespace's veth pair (and its route) asynchronously, so a
	// next run in this process could find them still there.
	pid, seq := os.Getpid(), int(guessNetSeq.Add(1))
	n := (pid + 7919*seq) % 0xffff
	pfx := func(sub uint16, host uint64) netip.Addr {
		var a [16]byte
		a[0], a[1], a[2], a[3] = 0xfd, 0x5c, 0xfe, 0x00
		a[4], a[5] = byte(n>>8), byte(n)
		a[6], a[7] = byte(sub>>8), byte(sub)
		for i := range 8 {
			a[15-i] = byte(host >> (8 * i))
		}
		return netip.AddrFrom16(a)
	}
	g := guessNet{ns: fmt.Sprintf("cfe-guess-%d-%d", pid, seq), agent: pfx(0, 1),
		terminalA: pfx(0x100, 0xa), terminalB: pfx(1, 0xb00)}
	peer := pfx(0, 2)
	hostIf, peerIf := fmt.Sprintf("cfgs%d-%dh", pid%100000, seq%100), fmt.Sprintf("cfgs%d-%dn", pid%100000, seq%100)
	run := func(stdin string, args ...string) error {
		cmd := exec.Command(ipTool, args...)
		cmd.Stdin = strings.NewReader(stdin)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	if err := run("", "netns", "add", g.ns); err != nil {
		if os.Getenv("CFE_STRICT_TOOLS") == "1" {
			t.Fatal(err)
		}
		t.Skip(err) // root without the capability: a restricted container
	}
	t.Cleanup(func() {
		if err := run("", "netns", "del", g.ns); err != nil { // takes the veth pair with it
			t.Error(err)
		}
	})
	var batch strings.Builder
	for p := range uint16(guessPrefixes) {
		for h := range uint64(guessPerPrefix) {
			a := pfx(p+1, h+1)
			g.guessers = append(g.guessers, a)
			fmt.Fprintf(&batch, "addr add %s/128 dev lo nodad\n", a)
		}
	}
	for _, a := range []netip.Addr{g.terminalA, g.terminalB} {
		fmt.Fprintf(&batch, "addr add %s/128 dev lo nodad\n", a)
	}
	// Interleave the prefixes, so that every /64 guesses all along.
	slices.SortStableFunc(g.guessers, func(a, b netip.Addr) int { return int(a.As16()[15]) - int(b.As16()[15]) })
	steps := []struct {
		stdin string
		args  []string
	}{
		{"", []string{"link", "add", hostIf, "type", "veth", "peer", "name", peerIf}},
		{"", []string{"link", "set", peerIf, "netns", g.ns}},
		{"", []string{"addr", "add", g.agent.String() + "/64", "dev", hostIf, "nodad"}},
		{"", []string{"link", "set", hostIf, "up"}},
		{"", []string{"route", "add", pfx(0, 0).String() + "/48", "via", peer.String(), "dev", hostIf}},
		{"", []string{"-n", g.ns, "link", "set", "lo", "up"}},
		{"", []string{"-n", g.ns, "addr", "add", peer.String() + "/64", "dev", peerIf, "nodad"}},
		{"", []string{"-n", g.ns, "link", "set", peerIf, "up"}},
		{batch.String(), []string{"-n", g.ns, "-batch", "-"}},
	}
	for _, s := range steps {
		if err := run(s.stdin, s.args...); err != nil {
			_ = run("", "link", "del", hostIf) // in case the pair exists but never moved
			t.Fatal(err)
		}
	}
	return g
}

// nsDialer makes TCP connections from inside a network namespace: its
// goroutines are locked to OS threads that joined the namespace, and a
// socket belongs to the namespace of the thread that made it, wherever it is
// used afterwards.
type nsDialer struct{ reqs chan nsDial }

type nsDial struct {
	ctx  context.Context
	src  netip.Addr
	addr string
	done chan nsDialed
}

type nsDialed struct {
	conn net.Conn
	err  error
}

func newNSDialer(t *testing.T, ns string, threads int) *nsDialer {
	t.Helper()
	d := &nsDialer{reqs: make(chan nsDial)}
	joined := make(chan error, threads)
	for range threads {
		go func() {
			// Never unlocked: the thread ends with the goroutine, so no other
			// goroutine ever runs in the namespace.
			runtime.LockOSThread()
			f, err := os.Open("/var/run/netns/" + ns)
			if err == nil {
				err = unix.Setns(int(f.Fd()), unix.CLONE_NEWNET)
				f.Close()
			}
			joined <- err
			if err != nil {
				return
			}
			for r := range d.reqs {
				dialer := net.Dialer{LocalAddr: &net.TCPAddr{IP: r.src.AsSlice()}}
				c, err := dialer.DialContext(r.ctx, "tcp6", r.addr)
				r.done <- nsDialed{c, err}
			}
		}()
	}
	for range threads {
		if err := <-joined; err != nil {
			t.Fatalf("joining the namespace %s: %v", ns, err)
		}
	}
	t.Cleanup(func() { close(d.reqs) })
	return d
}

// dial connects to addr from src, inside the namespace.
func (d *nsDialer) dial(ctx context.Context, src netip.Addr, addr string) (net.Conn, error) {
	done := make(chan nsDialed, 1)
	select {
	case d.reqs <- nsDial{ctx: ctx, src: src, addr: addr, done: done}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	r := <-done
	return r.conn, r.err
}
