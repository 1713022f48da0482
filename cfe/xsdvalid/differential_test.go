package xsdvalid_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/cfe-agent/cfe-agent/assets"
	"github.com/cfe-agent/cfe-agent/cfe/xsdvalid"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
)

// xmllintVerdicts validates docs with xmllint against the schema set the
// binary carries (assets.WriteSchemas, the files verify hands to xmllint)
// and returns the failures by document name with xmllint's messages.
func xmllintVerdicts(t *testing.T, docs []doc) map[string]string {
	t.Helper()
	testtool.Require(t, "xmllint")
	dir, err := assets.WriteSchemas(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	byEntry := map[string]map[string][]byte{}
	for _, d := range docs {
		if byEntry[d.entry] == nil {
			byEntry[d.entry] = map[string][]byte{}
		}
		if _, dup := byEntry[d.entry][d.name]; dup {
			t.Fatalf("document name %s twice", d.name)
		}
		byEntry[d.entry][d.name] = d.xml
	}
	failed := map[string]string{}
	for entry, set := range byEntry {
		for name, msg := range testtool.ValidateXSDBatch(t, filepath.Join(dir, entry), set) {
			failed[name] = msg
		}
	}
	return failed
}

// differential checks that the pure-Go verdict on every document equals
// xmllint's, and that every invalid verdict says where and why.
func differential(t *testing.T, docs []doc) (valid, invalid int) {
	t.Helper()
	valid, invalid, _ = differentialLenient(t, docs, false)
	return valid, invalid
}

// differentialLenient is differential; with lenientBase64, a document only
// libxml2 accepts because of base64 values with characters outside the
// alphabet (see lenient) is counted apart rather than failed.
func differentialLenient(t *testing.T, docs []doc, lenientBase64 bool) (valid, invalid, base64Lenient int) {
	t.Helper()
	goVerdicts := validateAll(t, docs)
	lint := xmllintVerdicts(t, docs)
	verdicts := goVerdicts()
	for i, d := range docs {
		err := verdicts[i]
		lintMsg, lintFails := lint[d.name]
		if d.lenient {
			if lintFails || err == nil {
				t.Errorf("%s (%s): want xmllint's leniency (valid) and Go's refusal; xmllint: %q, Go: %v", d.name, d.entry, lintMsg, err)
			}
			continue
		}
		if lenientBase64 && err != nil && !lintFails && onlyBase64Errors(err) {
			base64Lenient++
			continue
		}
		switch {
		case err == nil && lintFails:
			t.Errorf("%s (%s): valid in Go, xmllint says:\n%s", d.name, d.entry, lintMsg)
		case err != nil && !lintFails:
			t.Errorf("%s (%s): xmllint validates it, Go says: %v", d.name, d.entry, err)
		case err != nil:
			invalid++
			var es xsdvalid.Errors
			if !errors.As(err, &es) || len(es) == 0 {
				t.Errorf("%s: error %T is not xsdvalid.Errors", d.name, err)
				continue
			}
			for _, e := range es {
				if e.Line <= 0 || e.Message == "" || e.Detail == "" {
					t.Errorf("%s: error without line, message or detail: %+v", d.name, e)
				}
			}
		default:
			valid++
		}
	}
	return valid, invalid, base64Lenient
}

// validateAll starts validating docs in Go, on as many goroutines as there
// are CPUs, while the caller goes on (xmllint's side runs meanwhile); the
// function it returns waits and gives each document's error, in order.
func validateAll(t *testing.T, docs []doc) func() []error {
	t.Helper()
	schemas := map[string]*xsdvalid.Schema{}
	for _, d := range docs {
		if schemas[d.entry] == nil {
			schemas[d.entry] = schema(t, d.entry)
		}
	}
	verdicts := make([]error, len(docs))
	next := make(chan int)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for i := range next {
				verdicts[i] = schemas[docs[i].entry].Validate(docs[i].xml)
			}
		})
	}
	go func() {
		for i := range docs {
			next <- i
		}
		close(next)
	}()
	return func() []error {
		wg.Wait()
		return verdicts
	}
}

// onlyBase64Errors reports whether every error of err is a base64 value
// with a character outside the alphabet.
func onlyBase64Errors(err error) bool {
	var es xsdvalid.Errors
	if !errors.As(err, &es) {
		return false
	}
	for _, e := range es {
		value, _, _ := strings.Cut(strings.TrimPrefix(e.Message, "valor "), " ")
		v, qerr := strconv.Unquote(value)
		if !strings.HasSuffix(e.Message, "debe ser un valor en base64") || qerr != nil ||
			strings.Trim(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/= \t\r\n") == "" {
			return false
		}
	}
	return true
}

// TestValidate_samplesAndExamplesAgreeWithXmllint: every DGI sample (CFEs,
// envelope, CAE files, daily report) and every CFE the agent signs from
// examples/*.json, with the envelopes carrying them, gets xmllint's verdict.
func TestValidate_samplesAndExamplesAgreeWithXmllint(t *testing.T) {
	t.Parallel()
	docs := append(samples(t), signedExamples(t)...)
	valid, invalid := differential(t, docs)
	// Every document is valid against its own schema; each CAE file fails
	// the other CAE layout's schema, and the DGI envelope the receiver's.
	if valid != len(docs)-3 || invalid != 3 {
		t.Errorf("%d valid and %d invalid of %d documents; want all valid but the 2 CAE files against the other layout and the DGI envelope against the receiver's schema", valid, invalid, len(docs))
	}
}

// TestValidate_mutationsAgreeWithXmllint applies every mutation to the
// samples and a few signed examples and envelopes: the verdict on each
// mutated document is xmllint's.
func TestValidate_mutationsAgreeWithXmllint(t *testing.T) {
	t.Parallel()
	var bases []doc
	for _, d := range append(samples(t), signedExamples(t)...) {
		// Only valid documents: a mutation must be what makes one invalid
		// (TestValidate_samplesAndExamplesAgreeWithXmllint checks these).
		if isMutationBase(d) && schema(t, d.entry).Validate(d.xml) == nil {
			bases = append(bases, d)
		}
	}
	var docs []doc
	applied := map[string]int{}
	for mi, m := range mutations {
		for _, b := range bases {
			x, ok := apply(t, b.xml, m)
			if !ok {
				continue
			}
			applied[m.name]++
			docs = append(docs, doc{name: fmt.Sprintf("m%02d-%s", mi, b.name), entry: b.entry, xml: x, lenient: lenient[m.name]})
		}
	}
	var never []string
	for _, m := range mutations {
		if applied[m.name] == 0 {
			never = append(never, m.name)
		}
	}
	sort.Strings(never)
	if len(never) > 0 {
		t.Errorf("mutations that apply to no base document: %s", strings.Join(never, "; "))
	}
	valid, invalid := differential(t, docs)
	t.Logf("%d mutated documents: %d valid, %d invalid (both engines agreeing)", len(docs), valid, invalid)
	if valid < 50 || invalid < 300 {
		t.Errorf("only %d valid and %d invalid mutated documents", valid, invalid)
	}
}
