package main_test

import (
	"regexp"
	"strings"
	"testing"
)

// TestCLI_LANToken: "cfe-agent lan token" prints fresh tokens, all different,
// that the agent accepts as LAN tokens, while it refuses weak ones at load
// naming the field and the variable they came from.
func TestCLI_LANToken(t *testing.T) {
	t.Parallel()
	tokenRE := regexp.MustCompile(`^[0-9a-hjkmnp-tv-z]{4}(-[0-9a-hjkmnp-tv-z]{4}){6}$`)
	dataDir := t.TempDir()
	env := agentEnv("CFE_AGENT_DATA_DIR=" + dataDir)
	var tokens []string
	for range 3 {
		out, code := runCLI(t, env, "lan", "token", "--cantidad", "5")
		if code != 0 {
			t.Fatalf("lan token: exit %d\n%s", code, out)
		}
		tokens = append(tokens, strings.Fields(out)...)
	}
	seen := map[string]bool{}
	for _, tok := range tokens {
		if !tokenRE.MatchString(tok) || seen[tok] {
			t.Fatalf("lan token printed %q (repeated: %v); want fresh 7×4 groups of base32", tok, seen[tok])
		}
		seen[tok] = true
	}
	if len(seen) != 15 {
		t.Fatalf("3 × lan token -n 5 printed %d tokens, want 15", len(seen))
	}
	if out, code := runCLI(t, env, "lan", "token"); code != 0 || !tokenRE.MatchString(strings.TrimSpace(out)) {
		t.Fatalf("lan token alone: exit %d, %q; want one token", code, out)
	}
	if out, code := runCLI(t, env, "lan", "token", "-n", "0"); code == 0 || !strings.Contains(out, "--cantidad debe estar entre 1 y 100") {
		t.Fatalf("lan token -n 0: exit %d, %q; want refused in Spanish", code, out)
	}

	// The agent loads a LAN profile with them (the first run writes the default).
	lan := append(env, "CFE_AGENT_LAN_ENABLED=true", "CFE_AGENT_LISTEN=0.0.0.0:18787",
		"CFE_AGENT_LAN_TOKENS="+strings.Join(tokens, ","))
	if out, code := runCLI(t, lan, "profile", "list"); code != 0 || !strings.Contains(out, "0.0.0.0:18787") {
		t.Fatalf("profile list with %d fresh tokens: exit %d\n%s", len(tokens), code, out)
	}
	// ... and refuses weak ones, each named.
	weak := append(env, "CFE_AGENT_LAN_ENABLED=true", "CFE_AGENT_LISTEN=0.0.0.0:18787",
		"CFE_AGENT_LAN_TOKENS="+tokens[0]+",1111111111111111,token-largo-de-la-caja-2")
	out, code := runCLI(t, weak, "profile", "list")
	if code == 0 {
		t.Fatalf("profile list with weak tokens succeeded:\n%s", out)
	}
	for _, want := range []string{"profiles.sandbox.lan.tokens[1]: token débil: repite caracteres",
		"profiles.sandbox.lan.tokens[2]: es un token de ejemplo", "(valor de CFE_AGENT_LAN_TOKENS)", "cfe-agent lan token"} {
		if !strings.Contains(out, want) {
			t.Errorf("the refusal does not say %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "tokens[0]") || strings.Contains(out, "1111111111111111") || strings.Contains(out, "caja-2") {
		t.Errorf("the refusal names the good token or shows a token:\n%s", out)
	}
}
