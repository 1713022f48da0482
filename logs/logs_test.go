package logs

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"
)

func TestOpen_secretsNeverReachTheFile(t *testing.T) {
	t.Parallel()
	const (
		apiKey   = "xx_live_9f8e7d6c5b4a"
		password = "clave-del-certificado"
		token    = "token-largo-de-la-caja-2"
	)
	var stderr bytes.Buffer
	lg, err := Open(Config{Dir: t.TempDir(), Stderr: &stderr, Level: slog.LevelDebug})
	if err != nil {
		t.Fatal(err)
	}
	lg.Redactor.SetSecrets(apiKey, password, token, "", "ab")

	// Every way a secret could slip in: by key name, inside a string value,
	// inside an error, inside the message, inside a group, inside a struct.
	lg.Info("login", "api_key", "whatever-value", "Authorization", "Bearer abc", "certificate_password", "x")
	lg.Info("calling the hosted service", "url", "https://h.example/api?key="+apiKey)
	lg.Error("loading the certificate", "err", fmt.Errorf("pkcs12: wrong password %q: %w", password, errors.New("mac mismatch")))
	lg.Warn("token " + token + " refused")
	lg.Info("lan", slog.Group("lan", slog.String("peer", "10.0.0.2"), slog.String("presented", token)))
	lg.Info("struct", "cfg", struct{ Key string }{apiKey})
	lg.Info("ordinary record", "ab", "ab-cd") // too short to be a secret: left alone
	if err := lg.Close(); err != nil {
		t.Fatal(err)
	}

	file, err := os.ReadFile(lg.Path)
	if err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"file": string(file), "stderr": stderr.String()} {
		for _, secret := range []string{apiKey, password, token, "whatever-value", "Bearer abc"} {
			if strings.Contains(out, secret) {
				t.Errorf("%s holds the secret %q:\n%s", name, secret, out)
			}
		}
		if n := strings.Count(out, Mask); n != 8 {
			t.Errorf("%s has %d masks, want 8: three by key name in the login record, one in each later record but the last:\n%s", name, n, out)
		}
		for _, kept := range []string{"https://h.example/api?key=***", "mac mismatch", "peer=10.0.0.2", "ab=ab-cd", `msg="token *** refused"`} {
			if !strings.Contains(out, kept) {
				t.Errorf("%s lacks %q:\n%s", name, kept, out)
			}
		}
	}
}

func TestRedactor_secretsReplaced(t *testing.T) {
	t.Parallel()
	r := &Redactor{}
	r.SetSecrets("old-secret-1")
	r.SetSecrets("new-secret-2") // replaces the list
	a := r.ReplaceAttr(nil, slog.String("x", "old-secret-1 new-secret-2"))
	if got := a.Value.String(); got != "old-secret-1 ***" {
		t.Errorf("got %q", got)
	}
}
