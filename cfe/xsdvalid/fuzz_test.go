package xsdvalid_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/beevik/etree"

	"github.com/cfe-agent/cfe-agent/assets"
	"github.com/cfe-agent/cfe-agent/cfe/xsdvalid"
)

// FuzzValidate: whatever the bytes, Validate returns (no panic), within its
// step and depth budgets, and an invalid verdict is Errors with a message for
// each error, no more than the limit. Seeded with DGI's samples (not with
// the signed examples: each fuzz worker would generate a signing key first).
func FuzzValidate(f *testing.F) {
	for _, d := range samples(f) {
		f.Add(d.xml)
	}
	f.Add([]byte(`<CFE xmlns="http://cfe.dgi.gub.uy" version="1.0"><eTck/></CFE>`))
	f.Add([]byte(`<?xml version="1.0" encoding="x-desconocido"?><CFE/>`))
	// Not well-formed in ways encoding/xml lets through (see wellformed.go).
	f.Add([]byte(`<ns0:CFE version="1.0" version="1.0" xmlns:ns0="http://cfe.dgi.gub.uy"><ns0:eTck/></ns0:CFE>`))
	f.Add([]byte(`<CFE xmlns="http://cfe.dgi.gub.uy" q:y="1"><q:eTck/></CFE>`))
	f.Add([]byte(`<p:CFE xmlns:p="http://cfe.dgi.gub.uy"><p:eTck xmlns:p=""/></p:CFE>`))
	f.Add([]byte(`<CFE xmlns="http://cfe.dgi.gub.uy"/>texto<![CDATA[ ]]><CFE/>`))
	f.Add([]byte("\ufeff<!--c--><?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><CFE/>"))
	schemas := map[string]*xsdvalid.Schema{}
	for _, e := range []string{assets.SchemaCFE, assets.SchemaEnvelope, assets.SchemaEnvelopeReceiver, assets.SchemaCAE, assets.SchemaReport} {
		schemas[e] = schema(f, e)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for entry, s := range schemas {
			err := s.Validate(b)
			if err == nil {
				continue
			}
			var es xsdvalid.Errors
			if !errors.As(err, &es) || len(es) == 0 || len(es) > 20 {
				t.Fatalf("%s: %T with %d errors: %v", entry, err, len(es), err)
			}
			for _, e := range es {
				if e.Message == "" || e.Detail == "" {
					t.Fatalf("%s: error without message: %+v", entry, e)
				}
			}
		}
	})
}

// texts are the values random mutations write: valid and invalid for
// many of DGI's types, avoiding the known cases where libxml2 is lenient
// (base64 with foreign characters) or reads a date with white space around.
var texts = []string{"", "1", "0", "-1", "101", "999", "A", "a", "AB", "ABC", "12.5", "1.123", "+7", "007",
	"2016-07-19", "2016-13-01", "2016-07-19T15:56:20-03:00", "2016-07-19T15:56:20", "UYU", "ZZZ", "UY", "ZZ",
	"219999830019", "21999983001", "AAAA", "AAAAA", "AA==", "texto libre", strings.Repeat("x", 151), "1.0", "2.0"}

// randomMutation changes the document at random: an element removed,
// duplicated, moved after its next sibling or renamed, a text replaced,
// an attribute added or removed.
func randomMutation(r *rand.Rand, root *etree.Element) string {
	var all []*etree.Element
	var walk func(*etree.Element)
	walk = func(e *etree.Element) {
		all = append(all, e)
		for _, c := range e.ChildElements() {
			walk(c)
		}
	}
	walk(root)
	el := all[r.IntN(len(all))]
	p := el.Parent()
	switch op := r.IntN(7); {
	case op == 0 && p != nil && p.Parent() != nil:
		p.RemoveChild(el)
		return "remove " + el.Tag
	case op == 1 && p != nil && p.Parent() != nil:
		p.InsertChildAt(el.Index(), el.Copy())
		return "duplicate " + el.Tag
	case op == 2 && p != nil && p.Parent() != nil:
		i := el.Index()
		p.RemoveChildAt(i)
		p.InsertChildAt(min(i+2, len(p.Child)), el)
		return "move " + el.Tag
	case op == 3 && len(el.ChildElements()) == 0:
		v := texts[r.IntN(len(texts))]
		el.SetText(v)
		return fmt.Sprintf("text %s=%q", el.Tag, v)
	case op == 4:
		el.CreateAttr("version", texts[r.IntN(len(texts))])
		return "attribute version on " + el.Tag
	case op == 5 && len(el.Attr) > 0:
		a := el.Attr[r.IntN(len(el.Attr))]
		el.RemoveAttr(a.FullKey())
		return "remove attribute " + a.FullKey() + " of " + el.Tag
	default:
		old := el.Tag
		el.Tag = all[r.IntN(len(all))].Tag
		return "rename " + old + " to " + el.Tag
	}
}

// TestValidate_randomMutationsAgreeWithXmllint is a differential fuzz check
// against xmllint, off by default: CFE_XSD_DIFF_FUZZ=N validates N documents
// made by one to three random mutations of the samples and examples (seed
// CFE_XSD_DIFF_SEED, 1 by default) with both engines and wants the same
// verdict on each.
func TestValidate_randomMutationsAgreeWithXmllint(t *testing.T) {
	t.Parallel()
	n, _ := strconv.Atoi(os.Getenv("CFE_XSD_DIFF_FUZZ"))
	if n <= 0 {
		t.Skip("set CFE_XSD_DIFF_FUZZ=N to run N random differential cases against xmllint")
	}
	seed, _ := strconv.ParseUint(os.Getenv("CFE_XSD_DIFF_SEED"), 10, 64)
	if seed == 0 {
		seed = 1
	}
	r := rand.New(rand.NewPCG(seed, 0))
	var bases []doc
	for _, d := range append(samples(t), signedExamples(t)...) {
		if schema(t, d.entry).Validate(d.xml) == nil {
			bases = append(bases, d)
		}
	}
	var docs []doc
	how := map[string]string{}
	for i := range n {
		b := bases[r.IntN(len(bases))]
		var steps []string
		x, _ := apply(t, b.xml, mutation{"random", func(root *etree.Element) bool {
			for range 1 + r.IntN(3) {
				steps = append(steps, randomMutation(r, root))
			}
			return true
		}})
		name := fmt.Sprintf("r%05d-%s", i, b.name)
		how[name] = strings.Join(steps, "; ")
		docs = append(docs, doc{name: name, entry: b.entry, xml: x})
	}
	valid, invalid, lenient := differentialLenient(t, docs, true)
	if t.Failed() {
		for name, steps := range how {
			t.Logf("%s: %s", name, steps)
		}
	}
	t.Logf("seed %d: %d random documents, %d valid and %d invalid in both engines, %d base64 values only libxml2 accepts",
		seed, len(docs), valid, invalid, lenient)
}
