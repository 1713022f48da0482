package profiles

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

func TestRedacted(t *testing.T) {
	t.Parallel()
	cfg := validConfig()
	before := mustYAML(t, cfg)
	r := Redacted(cfg)

	yamlText := mustYAML(t, r)
	jsonText, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range allSecrets {
		if strings.Contains(yamlText, s) || strings.Contains(string(jsonText), s) {
			t.Errorf("secret %q appears in the redacted configuration", s)
		}
	}
	p := r.Profiles["caja1"]
	for name, got := range map[string]Secret{
		"certificate.password": p.Certificate.Password, "hosted.api_key": p.Hosted.APIKey,
		"hosted.secret": p.Hosted.Secret, "lan.tokens[0]": p.LAN.Tokens[0], "lan.tokens[1]": p.LAN.Tokens[1],
	} {
		if got.Value() != "***" {
			t.Errorf("%s = %q, want ***", name, got.Value())
		}
	}
	// A secret that is not set stays empty: "not set" is worth showing.
	if got := r.Profiles["pruebas"].Certificate.Password; got != "" {
		t.Errorf("unset password redacted to %q", got.Value())
	}
	// Everything else is kept.
	if p.Hosted.BaseURL != "https://api.servicio.example" || p.Company.RUC != "214844360018" {
		t.Error("Redacted changed fields that are not secret")
	}
	// The original is untouched: no slice or map is shared.
	if mustYAML(t, cfg) != before {
		t.Error("Redacted changed its argument")
	}
}

// TestSecret_hidden checks that a profile printed or logged in any usual way
// shows no secret.
func TestSecret_hidden(t *testing.T) {
	t.Parallel()
	p := validConfig().Profiles["caja1"]
	var out bytes.Buffer
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%d"} {
		fmt.Fprintf(&out, verb+"\n", p)
		fmt.Fprintf(&out, verb+"\n", p.Hosted.APIKey)
	}
	slog.New(slog.NewJSONHandler(&out, nil)).Info("perfil", "profile", p, "key", p.Hosted.APIKey)
	slog.New(slog.NewTextHandler(&out, nil)).Info("perfil", "profile", p, "key", p.Hosted.APIKey)
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	out.Write(b)
	for _, s := range allSecrets {
		if strings.Contains(out.String(), s) || strings.Contains(out.String(), fmt.Sprintf("%x", s)) {
			t.Errorf("secret %q printed", s)
		}
	}
	if !strings.Contains(out.String(), "***") {
		t.Error("no *** in the output: the test printed nothing useful")
	}
	if p.Hosted.APIKey.Value() != secretLiveKey {
		t.Error("Value does not return the secret")
	}
}
