// Package testtool holds helpers shared by tests: locating the shared reference
// material, and running the independent verifiers (xmllint, xmlsec1, pdftotext,
// zbarimg) that check fiscal output.
//
// A test that needs an external tool calls Require (root: RequireRoot; anything
// else the machine may lack: Unavailable). When it is missing the test is
// skipped with a clear message, unless CFE_STRICT_TOOLS=1 is set (as CI does):
// then it fails.
package testtool

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// EnvStrict names the environment variable that turns the skip of a test
// whose tool or environment is missing into a failure (CI sets it to 1).
const EnvStrict = "CFE_STRICT_TOOLS"

// Strict reports whether CFE_STRICT_TOOLS=1: a test that cannot run here
// fails instead of skipping.
func Strict() bool { return os.Getenv(EnvStrict) == "1" }

// Unavailable ends a test that cannot run here because something it needs
// (a tool, a library, root, a kernel feature) is missing: it is skipped
// with the reason, or failed under CFE_STRICT_TOOLS=1. Every such skip goes
// through here, so that a strict run (CI) never passes a test it did not
// run.
func Unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if Strict() {
		t.Fatalf("%s (%s=1)", msg, EnvStrict)
	}
	t.Skipf("%s; set %s=1 to make this a failure", msg, EnvStrict)
}

// Require returns the path of an external tool, skipping (or, under
// CFE_STRICT_TOOLS=1, failing) the test when it is not installed.
func Require(t testing.TB, tool string) string {
	t.Helper()
	p, err := exec.LookPath(tool)
	if err != nil {
		Unavailable(t, "tool %q is not installed", tool)
	}
	return p
}

// RequireRoot skips (or, under CFE_STRICT_TOOLS=1, fails) a test that needs
// root for what: CI runs the tests as root.
func RequireRoot(t testing.TB, what string) {
	t.Helper()
	if os.Geteuid() != 0 {
		Unavailable(t, "%s needs root (CI runs the tests as root)", what)
	}
}

// RepoRoot returns the directory holding go.mod.
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test's directory")
		}
		dir = parent
	}
}

// SharedDir returns the shared reference folder (DGI XSDs, samples, docs): the
// environment variable CFE_SHARED_DIR, else ../shared beside the repository.
func SharedDir(t testing.TB) string {
	t.Helper()
	if d := os.Getenv("CFE_SHARED_DIR"); d != "" {
		return d
	}
	d := filepath.Join(RepoRoot(t), "..", "shared")
	if _, err := os.Stat(filepath.Join(d, "dgi", "xsd", "CFEDGI.xsd")); err != nil {
		t.Fatalf("shared reference material not found at %s (set CFE_SHARED_DIR): %v", d, err)
	}
	return d
}

// XSD returns the path of one of DGI's official schemas, e.g. XSD(t, "CFEDGI.xsd").
func XSD(t testing.TB, name string) string {
	t.Helper()
	return filepath.Join(SharedDir(t), "dgi", "xsd", name)
}

// serialRE matches X509SerialNumber values: libxml2 rejects xs:integer values of
// more than 24 digits, which every real certificate serial has.
var serialRE = regexp.MustCompile(`(<(?:[A-Za-z0-9_]+:)?X509SerialNumber>)\d{25,}(</)`)

// ValidateXSD runs `xmllint --noout --nonet --schema xsd` on doc and returns
// xmllint's output and whether the document is valid. An X509SerialNumber longer
// than libxml2 accepts is shortened in the copy that is validated (the known
// libxml2 limit; the signature is not checked here).
func ValidateXSD(t testing.TB, xsd string, doc []byte) (string, bool) {
	t.Helper()
	bin := Require(t, "xmllint")
	doc = serialRE.ReplaceAll(doc, []byte("${1}1${2}"))
	f := filepath.Join(t.TempDir(), "doc.xml")
	if err := os.WriteFile(f, doc, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "--noout", "--nonet", "--schema", xsd, f).CombinedOutput()
	return string(out), err == nil
}

// MustValidateXSD fails the test when doc is not valid against the schema.
func MustValidateXSD(t testing.TB, xsd string, doc []byte) {
	t.Helper()
	if out, ok := ValidateXSD(t, xsd, doc); !ok {
		t.Fatalf("xmllint rejects the document against %s:\n%s\n--- document ---\n%s", filepath.Base(xsd), out, clip(doc))
	}
}

// XMLSecVerify runs `xmlsec1 --verify` on a signed document. With certPEM empty
// the certificate embedded in KeyInfo is used (--enabled-key-data x509
// --insecure); otherwise the key of that PEM certificate file.
func XMLSecVerify(t testing.TB, doc []byte, certPEM string) (string, bool) {
	t.Helper()
	bin := Require(t, "xmlsec1")
	f := filepath.Join(t.TempDir(), "signed.xml")
	if err := os.WriteFile(f, doc, 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"--verify"}
	if certPEM == "" {
		args = append(args, "--enabled-key-data", "x509", "--insecure")
	} else {
		args = append(args, "--pubkey-cert-pem", certPEM)
	}
	args = append(args, f)
	out, err := exec.Command(bin, args...).CombinedOutput()
	return string(out), err == nil && bytes.Contains(out, []byte("OK"))
}

func clip(b []byte) string {
	if len(b) > 4000 {
		return string(b[:4000]) + "…"
	}
	return string(b)
}

// CopyFile copies the file from into to (created or replaced, mode 0600), as
// a technician copies a store file aside or back.
func CopyFile(t testing.TB, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// BrowserProfile returns a new, empty folder for a headless browser's profile
// (--user-data-dir), removed when the test ends. Not t.TempDir: Chromium's
// helper processes may still write to it for a moment after the browser has
// gone, which would fail TempDir's own clean-up; this one retries for 5 s.
// Register it before the browser's own clean-up, so that it runs after it.
func BrowserProfile(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "cfe-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		retry := time.NewTicker(100 * time.Millisecond)
		defer retry.Stop()
		deadline := time.After(5 * time.Second)
		for {
			if err = os.RemoveAll(dir); err == nil {
				return
			}
			select {
			case <-retry.C:
			case <-deadline:
				t.Logf("leaving the browser profile %s: %v", dir, err)
				return
			}
		}
	})
	return dir
}

// ZeroStoreDataPages zeroes every page of the bbolt file at path but its two
// meta pages: the damage of a disk that lost the data but kept the header. It
// writes in place, so a store that has the file open (bbolt maps it shared)
// sees the damage too.
func ZeroStoreDataPages(t testing.TB, path string) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ps := int64(os.Getpagesize())
	if _, err := f.WriteAt(make([]byte, fi.Size()-2*ps), 2*ps); err != nil {
		t.Fatal(err)
	}
}

// FlipBitIn flips one bit in the middle of each occurrence of value in the
// file at path, in place: the damage of a disk that changed one bit of a
// stored value (bbolt may keep stale copies of a page among its free pages:
// each is changed alike). bbolt keeps values as plain bytes inside their
// pages, so the page tree stays valid (Open and bbolt's own check still
// pass); only a check of the value itself can tell. It fails the test when
// value is not in the file.
func FlipBitIn(t testing.TB, path string, value []byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(value) < 2 || !bytes.Contains(b, value) {
		t.Fatalf("FlipBitIn: the value (%d bytes) is not in %s", len(value), path)
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for from := 0; ; {
		i := bytes.Index(b[from:], value)
		if i < 0 {
			return
		}
		at := from + i + len(value)/2
		if _, err := f.WriteAt([]byte{b[at] ^ 0x10}, int64(at)); err != nil {
			t.Fatal(err)
		}
		from += i + len(value)
	}
}

// DGISample returns one of DGI's signed sample CFEs
// (shared/dgi/samples/extracted-cfe/name).
func DGISample(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(SharedDir(t), "dgi", "samples", "extracted-cfe", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// MustContain fails for each of want that text lacks; runs of white space
// count as one space, so that text wrapped over lines still matches (what
// pdftotext and esc2text print). what names the text in the messages.
func MustContain(t testing.TB, what, text string, want ...string) {
	t.Helper()
	flat := strings.Join(strings.Fields(text), " ")
	missing := false
	for _, w := range want {
		if !strings.Contains(flat, strings.Join(strings.Fields(w), " ")) {
			t.Errorf("%s lacks %q", what, w)
			missing = true
		}
	}
	if missing {
		t.Logf("%s:\n%s", what, text)
	}
}
