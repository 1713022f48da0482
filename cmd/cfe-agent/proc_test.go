package main_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
	"github.com/cfe-agent/cfe-agent/localapi/localclient"
)

// agentProc is a running cfe-agent process.
type agentProc struct {
	t       *testing.T
	cmd     *exec.Cmd
	dataDir string
	baseURL string
	stderr  *syncBuffer
	done    chan struct{} // closed when the process has exited
	waitErr error
}

// procEnv is a clean environment for an agent under test: its own data
// directory, HOME and XDG_CONFIG_HOME, Montevideo's time zone, and no session
// bus unless extra names one.
func procEnv(t *testing.T, dataDir string, extra ...string) []string {
	home := t.TempDir()
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_RUNTIME_DIR=" + home, // no bus socket there
		"CFE_AGENT_DATA_DIR=" + dataDir,
		"TZ=America/Montevideo",
	}
	return append(env, extra...)
}

// startProc runs cfe-agent args with env and waits until it listens.
func startProc(t *testing.T, env []string, args ...string) *agentProc {
	t.Helper()
	p := &agentProc{t: t, stderr: &syncBuffer{}, done: make(chan struct{})}
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "CFE_AGENT_DATA_DIR="); ok {
			p.dataDir = v
		}
	}
	p.cmd = exec.Command(agentBinary(t), args...)
	p.cmd.Env = env
	p.cmd.Stderr = p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.waitErr = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			p.cmd.Process.Kill()
			<-p.done
		}
		if t.Failed() {
			t.Logf("agent stderr:\n%s", p.stderr.String())
		}
	})
	// Each write of its log is looked at; its exit ends the wait.
	text, ok := p.stderr.Await(p.done, 30*time.Second, listeningRE.MatchString)
	if !ok {
		select {
		case <-p.done:
			t.Fatalf("agent exited before listening: %v\n%s", p.waitErr, text)
		default:
			t.Fatalf("agent did not listen within 30 s:\n%s", text)
		}
	}
	p.baseURL = listeningRE.FindStringSubmatch(text)[1]
	return p
}

// signal sends sig and waits for the exit, returning the exit status.
func (p *agentProc) stop(sig syscall.Signal) int {
	p.t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		p.t.Fatal(err)
	}
	return p.wait(15 * time.Second)
}

// wait waits for the process to exit and returns its status.
func (p *agentProc) wait(d time.Duration) int {
	p.t.Helper()
	select {
	case <-p.done:
	case <-time.After(d):
		p.t.Fatalf("agent did not exit within %s:\n%s", d, p.stderr.String())
	}
	return p.cmd.ProcessState.ExitCode()
}

// waitLine waits until the agent's stderr has a line holding every one of parts.
func (p *agentProc) waitLine(parts ...string) {
	p.t.Helper()
	// Each write of its log is looked at; its exit ends the wait.
	if text, ok := p.stderr.Await(p.done, 15*time.Second, func(s string) bool { return len(linesOf(s, parts...)) > 0 }); !ok {
		p.t.Fatalf("the agent never logged %q (waited 15 s or until its exit):\n%s", parts, text)
	}
}

// client returns a local module client of the agent.
func (p *agentProc) client() *localclient.Client {
	c, err := localclient.New(p.baseURL, localclient.Options{})
	if err != nil {
		p.t.Fatal(err)
	}
	return c
}

// signExample signs examples/e-ticket.json under uuid and returns the answer.
func (p *agentProc) signExample(uuid string) *apitype.SignResponse {
	p.t.Helper()
	body, err := os.ReadFile(filepath.Join(testtool.RepoRoot(p.t), "examples", "e-ticket.json"))
	if err != nil {
		p.t.Fatal(err)
	}
	body = regexp.MustCompile(`"uuid": "[^"]+"`).ReplaceAll(body, []byte(`"uuid": "`+uuid+`"`))
	resp, err := p.client().SignCFE(context.Background(), body)
	if err != nil {
		p.t.Fatalf("signing: %v", err)
	}
	if resp.CodigoRespuesta != "00" {
		p.t.Fatalf("signing answered %s: %s", resp.CodigoRespuesta, resp.MensajeRespuesta)
	}
	return resp
}

// getAccept sends a GET with the Accept header and returns the response's
// headers and body.
func getAccept(t *testing.T, url, accept string) (http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", accept)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.Header, body
}

// syncBuffer is the agent's stderr, written by the process while the test
// reads it.
type syncBuffer struct{ testtool.SyncBuffer }

// lines returns the buffer's lines that contain every one of parts.
func (b *syncBuffer) lines(parts ...string) []string { return linesOf(b.String(), parts...) }

// linesOf returns the lines of text that contain every one of parts.
func linesOf(text string, parts ...string) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		ok := true
		for _, p := range parts {
			ok = ok && strings.Contains(sc.Text(), p)
		}
		if ok {
			out = append(out, sc.Text())
		}
	}
	return out
}

func itoa(n int64) string { return fmt.Sprint(n) }
