package profiles

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
)

// lanTokenRE is NewLANToken's format.
var lanTokenRE = regexp.MustCompile(`^[0-9a-hjkmnp-tv-z]{4}(-[0-9a-hjkmnp-tv-z]{4}){6}$`)

// TestNewLANToken: fresh tokens have the documented format, are all
// different, use the whole alphabet, and pass validation.
func TestNewLANToken(t *testing.T) {
	t.Parallel()
	const n = 500
	seen := map[string]bool{}
	used := map[rune]bool{}
	for range n {
		tok := NewLANToken()
		if !lanTokenRE.MatchString(tok) {
			t.Fatalf("token %q is not 7 groups of 4 of Crockford's base32 in lower case", tok)
		}
		if seen[tok] {
			t.Fatalf("token %q drawn twice", tok)
		}
		seen[tok] = true
		for _, r := range strings.ReplaceAll(tok, "-", "") {
			used[r] = true
		}
		if bits := LANTokenBits(tok, nil); bits < MinLANTokenBits || bits > 140 {
			t.Fatalf("token %q rated %.1f bits, want between %d and its 140", tok, bits, MinLANTokenBits)
		}
	}
	if len(used) != 32 {
		t.Fatalf("%d tokens used %d distinct characters, want all 32 of the alphabet", n, len(used))
	}
	cfg := validConfig()
	p := cfg.Profiles["caja1"]
	p.LAN.Tokens = []Secret{Secret(NewLANToken()), Secret(NewLANToken())}
	cfg.Profiles["caja1"] = p
	if err := cfg.Validate(); err != nil {
		t.Fatalf("a configuration with fresh tokens: %v", err)
	}
}

// TestRateToken: what the estimator makes of tokens people write, and of
// random ones from common generators.
func TestRateToken(t *testing.T) {
	t.Parallel()
	known := profileWords("caja1", validConfig().Profiles["caja1"])
	weak := []struct {
		tok  string
		why  weakness
		most float64 // the estimate is at most this
	}{
		{"1111111111111111", weakRepeat, 10},
		{"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", weakRepeat, 15},
		{"abcabcabcabcabcabcabcabcabcabcabcabc", weakRepeat, 30},
		{"0123456789abcdefghijklmnopqrstuvwxyz", weakSequence, 30},
		{"9876543210-zyxwvutsrq-ZYXWVUTSRQ", weakSequence, 40},
		{"qwertyuiop-asdfghjklñ-zxcvbnm-poiuytrewq", weakKeyboard, 50},
		{"contraseña-secreta-de-la-tienda-paysandu", weakWord, 120},
		{"P4ssw0rd-Sup3rm3rc4d0-Tienda-Caj3r0-Penarol", weakWord, 100},
		{"correct-horse-battery-staple-paris-london", weakWord, 110},
		{"laesquina-214844360018-caja1-29001234", weakKnown, 40},
		{"token-caja-uno-0123456789", weakSequence, 60},
		{"f47ac10b-58cc-4372-a567-0e02b2c3d479", weakUUID, 122},
		{"x7Kq2mP9vL4w", weakShort, 75},
		{"3f9a1c7e5b2d8f4a6c0e9b1d7a3f5c", weakShort, 120}, // 30 hex digits: 120 bits
	}
	for _, tc := range weak {
		bits, why := rateToken(tc.tok, known)
		if bits >= MinLANTokenBits || bits > tc.most || why != tc.why {
			t.Errorf("%q: %.1f bits, %s; want at most %.0f, %s", tc.tok, bits, reasons[why], tc.most, reasons[tc.why])
		}
	}
	strong := []struct {
		tok  string
		bits float64 // the estimate, to a tenth of a bit
	}{
		{"3f9a1c7e5b2d8f4a6c0e9b1d7a3f5c8e", 128},               // openssl rand -hex 16
		{"Zk3pQ9vX7mL2wR8tY4nB6c", 131},                         // 22 base62 characters
		{"bT5_xR8-kW2zQ7vN4mJ9pL6hY3c", 162},                    // 27 base64url characters
		{"MZXW6YTBOJRGC3DPNVSW4ZDFORUW2ZI", 155},                // 31 RFC 4648 base32 characters
		{"xK9#mP2$vL7@qR4!tW8&nZ5^", 24 * 6.569855608330948},    // 24 printable ASCII
		{"ncmm-egrz-x76k-x45j-srrf-f6n6-338h", 140},             // cfe-agent lan token
		{"vazm-a9hr-veap-4ghn-efmn-hbnp-jdhj-extra-4d7q-9z", 0}, // the example inside a longer token: rated below
	}
	for _, tc := range strong[:len(strong)-1] {
		bits, why := rateToken(tc.tok, known)
		if bits < MinLANTokenBits || bits < tc.bits-0.1 || bits > tc.bits+0.1 {
			t.Errorf("%q: %.1f bits (%s), want %.1f", tc.tok, bits, reasons[why], tc.bits)
		}
	}
	// A token that holds the example token gets nothing for that part.
	inside := strong[len(strong)-1].tok
	if bits, why := rateToken(inside, known); bits >= MinLANTokenBits || why != weakKnown {
		t.Errorf("%q: %.1f bits (%s), want the example charged as known", inside, bits, reasons[why])
	}
}

// TestConfig_Validate_lanTokens: weak tokens are refused at load, each naming
// its field and why, in Spanish, without showing the token.
func TestConfig_Validate_lanTokens(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, tok string
		says      string
	}{
		{"repeated characters", "1111111111111111", "repite caracteres"},
		{"the example of config.yaml", exampleTokens[1], "token de ejemplo"},
		{"the example older versions showed", "token-largo-de-la-caja-2", "token de ejemplo"},
		{"dictionary-like", "Kiosco-Paysandu-Penarol-Campeon-Verano-2026", "palabras comunes"},
		{"short", "x7Kq2mP9", "demasiado corto"},
		{"the company's data", "214844360018-LaEsquina-caja1", "datos del perfil"},
		{"a UUID", "f47ac10b-58cc-4372-a567-0e02b2c3d479", "UUID"},
		{"a space", "ncmm-egrz-x76k x45j-srrf-f6n6-338h", "espacios"},
		{"a control character", "ncmm-egrz-x76k\x7fx45j-srrf-f6n6-338h", "caracteres de control"},
		{"too long", strings.Repeat("ncmm-egrz-x76k-x45j-srrf-f6n6-338h", 8), "a lo sumo 256"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := validConfig()
			p := cfg.Profiles["caja1"]
			p.LAN.Tokens[1] = Secret(tc.tok)
			cfg.Profiles["caja1"] = p
			e := wantInvalid(t, cfg.Validate(), "profiles.caja1.lan.tokens[1]")
			msg := e.Fields[0].Mensaje
			if !strings.Contains(msg, tc.says) {
				t.Errorf("message %q does not say %q", msg, tc.says)
			}
			if len(tc.tok) > 4 && strings.Contains(e.Error(), tc.tok) || strings.Contains(e.Error(), "1111") {
				t.Errorf("the error shows the token: %q", e.Error())
			}
			if !strings.Contains(msg, "cfe-agent lan token") && tc.says != "espacios" && tc.says != "caracteres de control" &&
				tc.says != "a lo sumo 256" {
				t.Errorf("message %q does not say how to make a good one", msg)
			}
		})
	}
}

// TestLoad_weakLANToken: a weak token in config.yaml keeps the configuration
// from loading, the file and the field named.
// Serial: it sets the process's environment (clearEnv, t.Setenv), which the package reads.
func TestLoad_weakLANToken(t *testing.T) {
	clearEnv(t)
	dir := t.TempDir()
	cfg := validConfig()
	if err := Save(dir, cfg); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	raw = []byte(strings.Replace(string(raw), secretToken2, "token-largo-de-la-caja-2", 1))
	writeConfig(t, dir, string(raw))
	_, err = Load(dir)
	e := wantInvalid(t, err, "profiles.caja1.lan.tokens[1]")
	if cfe.ErrorCode(err) != cfe.EINVALID || !strings.HasPrefix(e.Message, "profiles.caja1.lan.tokens[1]: ") {
		t.Fatalf("error %v, want the field in the message", err)
	}
}

// TestExampleTokens: the example the default config.yaml shows is refused,
// and it is the only token-like string there, so that the refusal keeps up
// with the file.
func TestExampleTokens(t *testing.T) {
	t.Parallel()
	if len(exampleTokens) != 2 || !lanTokenRE.MatchString(exampleTokens[1]) {
		t.Fatalf("example tokens %q: want the old one and the default config.yaml's, in lan token's format", exampleTokens)
	}
	if !strings.Contains(string(defaultYAML), `tokens: ["`+exampleTokens[1]+`"]`) {
		t.Fatalf("default.yaml does not show %q", exampleTokens[1])
	}
	for _, e := range exampleTokens {
		if !isExampleToken(strings.ToUpper(e)) {
			t.Errorf("%q in upper case is not refused", e)
		}
	}
	// Every token in lan token's format that the README or docs/ show is
	// one of them, or a placeholder too weak to pass.
	root := testtool.RepoRoot(t)
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	shown := 0
	for _, f := range append(docs, filepath.Join(root, "README.md")) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, tok := range lanTokenInText.FindAllString(string(b), -1) {
			shown++
			if !isExampleToken(tok) && LANTokenBits(tok, nil) >= MinLANTokenBits {
				t.Errorf("%s shows the token %q, which is not refused as an example", filepath.Base(f), tok)
			}
		}
	}
	if shown == 0 {
		t.Error("the README shows no example token: has lan token's format changed?")
	}
}

// lanTokenInText finds lan token's format in a text.
var lanTokenInText = regexp.MustCompile(`\b[0-9a-hjkmnp-tv-z]{4}(-[0-9a-hjkmnp-tv-z]{4}){6}\b`)

// BenchmarkRateToken is the cost of rating one token of lan token's format
// (each configured token is rated once per load).
func BenchmarkRateToken(b *testing.B) {
	known := profileWords("caja1", validConfig().Profiles["caja1"])
	for b.Loop() {
		rateToken("ncmm-egrz-x76k-x45j-srrf-f6n6-338h", known)
	}
}
