package sandbox_test

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/cfe-agent/cfe-agent/sandbox"
	"github.com/cfe-agent/cfe-agent/sandbox/auth"
)

// TestSecretsNotStoredInClear scans the bbolt file's bytes for every secret
// that went through the server.
func TestSecretsNotStoredInClear(t *testing.T) {
	t.Parallel()
	box, addr := startMailbox(t)
	e := start(t, func(c *sandbox.Config) { c.SMTPAddr = addr })

	tok := e.login("ana", anaPassword)
	var created auth.CreatedKeyResponse
	e.do("POST", "/api/v1/apikeys", auth.CreateKeyRequest{Nombre: "caja"}, bearer(tok.Token)...).expect(t, http.StatusCreated).decode(t, &created)
	var userKey auth.UserKeyResponse
	e.do("POST", "/api/v1/usuario/"+jwtPart(t, tok.Token, 1)["sub"].(string)+"/apikey", nil, bearer(tok.Token)...).expect(t, http.StatusCreated).decode(t, &userKey)
	e.do("POST", "/api/auth/recuperarClave", auth.RecoverRequest{Username: "beto"}).expect(t, http.StatusOK)
	temp := tempPasswordRe.FindStringSubmatch(box.all()[0].data)[1]
	e.close()

	// Every file of the data directory: the sandbox's own and the companies' stores.
	files, err := filepath.Glob(filepath.Join(e.cfg.DataDir, "*.db"))
	if err != nil || len(files) < 2 {
		t.Fatalf("data files %v, %v", files, err)
	}
	var raw []byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		raw = append(raw, b...)
	}
	secrets := map[string]string{
		"created company key": created.ApiKey,
		"seeded company key":  keyAlfa,
		"user key":            userKey.ApiKey,
		"password":            anaPassword,
		"seeded password":     betoPassword,
		"demo password":       "demo-password",
		"temporary password":  temp,
		"refresh token":       tok.RefreshToken,
	}
	for name, s := range secrets {
		if len(s) < 8 {
			t.Fatalf("%s %q is too short to scan for", name, s)
		}
		if bytes.Contains(raw, []byte(s)) {
			t.Errorf("the %s is stored in clear", name)
		}
	}
	// Control: the scan does find what is stored in clear.
	if !bytes.Contains(raw, []byte("ana@alfa.test")) {
		t.Error("the scan does not see the file's contents")
	}
}
