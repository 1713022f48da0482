package xsdvalid_test

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/text/encoding/charmap"

	"github.com/cfe-agent/cfe-agent/cfe/xsdvalid"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
)

// textMutation changes a document's text (encoding/xml, and so etree,
// cannot write what these write); false when it does not apply.
type textMutation struct {
	name string
	fn   func(b []byte) ([]byte, bool)
}

// rootTagRE finds the root element's start tag (the first tag that is not
// a declaration, comment or processing instruction).
var rootTagRE = regexp.MustCompile(`<([A-Za-z_][^\s/>]*)[^>]*>`)

// inRootTag inserts attrs into the root element's start tag, after its name.
func inRootTag(attrs string) func([]byte) ([]byte, bool) {
	return func(b []byte) ([]byte, bool) {
		m := rootTagRE.FindSubmatchIndex(b)
		if m == nil {
			return nil, false
		}
		return concat(b[:m[3]], []byte(" "+attrs), b[m[3]:]), true
	}
}

// inRoot inserts s as the root element's first content.
func inRoot(s string) func([]byte) ([]byte, bool) {
	return func(b []byte) ([]byte, bool) {
		m := rootTagRE.FindIndex(b)
		if m == nil || b[m[1]-2] == '/' {
			return nil, false
		}
		return concat(b[:m[1]], []byte(s), b[m[1]:]), true
	}
}

// after appends s after the root element.
func after(s string) func([]byte) ([]byte, bool) {
	return func(b []byte) ([]byte, bool) { return concat(bytes.TrimRight(b, " \t\r\n"), []byte(s)), true }
}

// prolog replaces whatever precedes the root element (an XML declaration,
// comments) with p.
func prolog(p string) func([]byte) ([]byte, bool) {
	return func(b []byte) ([]byte, bool) {
		m := rootTagRE.FindIndex(b)
		if m == nil {
			return nil, false
		}
		return concat([]byte(p), b[m[0]:]), true
	}
}

// latin1 writes the document in ISO-8859-1, declared so, and then applies fn.
func latin1(fn func([]byte) ([]byte, bool)) func([]byte) ([]byte, bool) {
	return func(b []byte) ([]byte, bool) {
		b, ok := prolog(`<?xml version="1.0" encoding="ISO-8859-1"?>`)(b)
		if !ok {
			return nil, false
		}
		l, err := charmap.ISO8859_1.NewEncoder().Bytes(b)
		if err != nil {
			return nil, false
		}
		return fn(l)
	}
}

func concat(parts ...[]byte) []byte {
	return bytes.Join(parts, nil)
}

// malformations make a document that is not well-formed XML with namespaces
// while encoding/xml reads it without complaint: Validate must refuse each
// as not well-formed, and xmllint must too.
var malformations = []textMutation{
	{"version attribute twice on the root", func(b []byte) ([]byte, bool) {
		m := rootTagRE.Find(b)
		if !bytes.Contains(m, []byte(`version="1.0"`)) {
			return nil, false
		}
		return bytes.Replace(b, []byte(`version="1.0"`), []byte(`version="1.0" version="1.0"`), 1), true
	}},
	{"attribute repeated", inRootTag(`a="1" a="2"`)},
	{"namespace declaration repeated", inRootTag(`xmlns:p="urn:x" xmlns:p="urn:x"`)},
	{"same attribute through two prefixes", inRootTag(`xmlns:a="urn:x" xmlns:b="urn:x" a:z="1" b:z="2"`)},
	{"attribute with an unbound prefix", inRootTag(`q:y="1"`)},
	{"element with an unbound prefix", inRoot(`<q:x/>`)},
	{"prefix undeclared (xmlns:p=\"\")", inRootTag(`xmlns:p=""`)},
	{"prefix xml bound elsewhere", inRootTag(`xmlns:xml="urn:x"`)},
	{"prefix xmlns declared", inRootTag(`xmlns:xmlns="urn:x"`)},
	{"the xml namespace bound to another prefix", inRootTag(`xmlns:p="http://www.w3.org/XML/1998/namespace"`)},
	{"attribute name with an empty prefix", inRootTag(`:b="1"`)},
	{"second root element", after(`<Otro/>`)},
	{"text after the root", after(`texto`)},
	{"CDATA of white space after the root", after(`<![CDATA[ ]]>`)},
	{"character reference after the root", after(`&#32;`)},
	{"text before the root", prolog(`<?xml version="1.0" encoding="UTF-8"?>texto`)},
	{"XML declaration after a comment", prolog(`<!--c--><?xml version="1.0" encoding="UTF-8"?>`)},
	{"XML declaration after white space", prolog(` <?xml version="1.0" encoding="UTF-8"?>`)},
	{"XML declaration without version", prolog(`<?xml encoding="UTF-8"?>`)},
	{"XML declaration with standalone=maybe", prolog(`<?xml version="1.0" standalone="maybe"?>`)},
	{"XML declaration inside the root", inRoot(`<?xml version="1.0"?>`)},
	{"processing instruction named XmL", inRoot(`<?XmL x?>`)},
	{"ISO-8859-1, CDATA of white space after the root", latin1(after(`<![CDATA[ ]]>`))},
	{"ISO-8859-1, text after the root", latin1(after(`texto`))},
}

// wellFormedVariants change only how a document is written, in ways XML
// allows: both engines' verdicts stay the base document's (valid).
var wellFormedVariants = []textMutation{
	{"byte order mark", func(b []byte) ([]byte, bool) { return concat([]byte("\ufeff"), b), true }},
	{"byte order mark and declaration", prolog("\ufeff" + `<?xml version="1.0" encoding="UTF-8" standalone="no"?>`)},
	{"declaration with single quotes", prolog(`<?xml version='1.0' encoding='utf-8'?>`)},
	{"comment, processing instruction and white space after the root", after("\n<!-- fin --><?nota x?>\r\n ")},
	{"unused prefix declared on the root", inRootTag(`xmlns:p="urn:x"`)},
	{"xml prefix declared correctly", inRootTag(`xmlns:xml="http://www.w3.org/XML/1998/namespace"`)},
}

// TestValidate_malformedAgreeWithXmllint applies every malformation to the
// samples and a few signed examples and envelopes: Validate refuses each
// as not well-formed and xmllint finds it not well-formed too; the
// well-formed variants stay valid for both.
func TestValidate_malformedAgreeWithXmllint(t *testing.T) {
	t.Parallel()
	var bases []doc
	for _, d := range append(samples(t), signedExamples(t)...) {
		if isMutationBase(d) && schema(t, d.entry).Validate(d.xml) == nil {
			bases = append(bases, doc{name: d.name, entry: d.entry, xml: utf8Doc(t, d.xml)})
		}
	}
	build := func(ms []textMutation, prefix string) []doc {
		var docs []doc
		for mi, m := range ms {
			n := 0
			for _, b := range bases {
				x, ok := m.fn(b.xml)
				if !ok {
					continue
				}
				n++
				docs = append(docs, doc{name: fmt.Sprintf("%s%02d-%s", prefix, mi, b.name), entry: b.entry, xml: x})
			}
			if n == 0 {
				t.Errorf("%q applies to no base document", m.name)
			}
		}
		return docs
	}

	bad := build(malformations, "w")
	set := map[string][]byte{}
	for _, d := range bad {
		set[d.name] = d.xml
	}
	lint := testtool.WellFormedBatch(t, set)
	for _, d := range bad {
		if _, ok := lint[d.name]; !ok {
			t.Errorf("%s: xmllint finds it well-formed", d.name)
		}
		err := schema(t, d.entry).Validate(d.xml)
		var es xsdvalid.Errors
		if !errors.As(err, &es) || len(es) != 1 || !strings.HasPrefix(es[0].Detail, "not well-formed XML: ") ||
			!strings.HasPrefix(es[0].Message, "no es XML bien formado: ") || es[0].Line == 0 {
			t.Errorf("%s: want one well-formedness error with its line, got %v", d.name, err)
		}
	}

	good := build(wellFormedVariants, "v")
	valid, invalid := differential(t, good)
	if valid != len(good) || invalid != 0 {
		t.Errorf("%d valid and %d invalid of %d well-formed variants; want all valid", valid, invalid, len(good))
	}
	t.Logf("%d malformed documents refused by both, %d variants valid for both", len(bad), valid)
}
