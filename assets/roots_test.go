package assets

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every embedded CA certificate parses, is a CA, has a role in caRoles and is
// documented in roots/SOURCE.md by its SHA-256 fingerprint; every role names
// a file that exists, and at least one anchor is shipped.
func TestCAs_ListedAndDocumented(t *testing.T) {
	t.Parallel()
	cas, err := CAs()
	if err != nil {
		t.Fatal(err)
	}
	source, err := os.ReadFile(filepath.Join("roots", "SOURCE.md"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	anchors := 0
	for _, ca := range cas {
		t.Run(ca.File, func(t *testing.T) {
			seen[ca.File] = true
			if _, ok := caRoles[ca.File]; !ok {
				t.Errorf("%s is not listed in caRoles", ca.File)
			}
			blk, rest := pem.Decode(ca.PEM)
			if blk == nil || blk.Type != "CERTIFICATE" || strings.TrimSpace(string(rest)) != "" {
				t.Fatalf("%s is not exactly one PEM certificate", ca.File)
			}
			cert, err := x509.ParseCertificate(blk.Bytes)
			if err != nil {
				t.Fatal(err)
			}
			if !cert.BasicConstraintsValid || !cert.IsCA || cert.KeyUsage&x509.KeyUsageCertSign == 0 {
				t.Errorf("%s (%s) is not a CA certificate", ca.File, cert.Subject)
			}
			sum := sha256.Sum256(blk.Bytes)
			if fp := strings.ToUpper(hex.EncodeToString(sum[:])); !strings.Contains(string(source), fp) {
				t.Errorf("roots/SOURCE.md does not document %s by its SHA-256 %s", ca.File, fp)
			}
			if !strings.Contains(string(source), "`"+ca.File+"`") {
				t.Errorf("roots/SOURCE.md does not name %s", ca.File)
			}
		})
		if ca.Anchor {
			anchors++
		}
	}
	for f := range caRoles {
		if !seen[f] {
			t.Errorf("caRoles lists %s, which is not under roots/", f)
		}
	}
	if anchors == 0 {
		t.Error("no anchor among the embedded CAs")
	}
}
