package profiles

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strconv"
)

// Secret is a password, key or token. It reads "***" through fmt, log/slog
// and encoding/json, so that a logged or reported profile does not leak it;
// Value returns it. Only YAML (what Save writes) carries the real value: use
// Redacted before showing a Config as YAML.
type Secret string

const redactedMark = "***"

// Value returns the secret itself.
func (s Secret) Value() string { return string(s) }

// masked is "***" for a secret that is set and "" for one that is not.
func (s Secret) masked() string {
	if s == "" {
		return ""
	}
	return redactedMark
}

// String hides the secret.
func (s Secret) String() string { return s.masked() }

// Format hides the secret from every fmt verb, %d and %x included.
func (s Secret) Format(f fmt.State, verb rune) {
	if verb == 'q' || verb == 'v' && f.Flag('#') {
		io.WriteString(f, strconv.Quote(s.masked()))
		return
	}
	io.WriteString(f, s.masked())
}

// LogValue hides the secret from log/slog.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.masked()) }

// MarshalJSON hides the secret from encoding/json (and so from slog's JSON
// handler, which encodes structs with it).
func (s Secret) MarshalJSON() ([]byte, error) { return json.Marshal(s.masked()) }

// Redacted returns a deep copy of cfg in which every secret that is set (the
// certificate password, the hosted API key and secret, the LAN tokens) reads
// "***". Use it for diagnostics and "profile show".
func Redacted(cfg *Config) *Config {
	r := cfg.clone()
	for name, p := range r.Profiles {
		p.Certificate.Password = Secret(p.Certificate.Password.masked())
		p.Hosted.APIKey = Secret(p.Hosted.APIKey.masked())
		p.Hosted.Secret = Secret(p.Hosted.Secret.masked())
		for i, t := range p.LAN.Tokens {
			p.LAN.Tokens[i] = Secret(t.masked())
		}
		r.Profiles[name] = p
	}
	return r
}
