package localapi_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// valueField is one property of the request schema, by the path
// cfe.RequestFields writes ("cfe.detalles[].cantidad"), with the kind of
// value the schema gives it.
type valueField struct {
	path string
	kind string // decimal, integer, string, date, object, required-object, list, text-list, ignored
}

// schemaValueFields walks the request schema from SignRequest, as
// schemaFields does, and gives each property its kind.
func schemaValueFields(t *testing.T, doc map[string]any) []valueField {
	t.Helper()
	var out []valueField
	var walk func(s map[string]any, prefix string, depth int)
	walk = func(s map[string]any, prefix string, depth int) {
		if depth > 10 {
			t.Fatalf("the request schema nests deeper than the request can (at %s)", prefix)
		}
		required := map[string]bool{}
		if list, ok := s["required"].([]any); ok {
			for _, r := range list {
				required[fmt.Sprint(r)] = true
			}
		}
		props, _ := s["properties"].(map[string]any)
		for name, v := range props {
			p, _ := v.(map[string]any)
			path := prefix + name
			if p["x-cfe-ignorado"] == true {
				out = append(out, valueField{path, "ignored"})
				continue
			}
			f := valueField{path: path}
			sub, target := p, map[string]any(nil)
			if p["type"] == "array" {
				f.kind = "list"
				sub, _ = p["items"].(map[string]any)
				if sub["type"] == "string" {
					f.kind = "text-list"
				}
				path += "[]"
			}
			if ref, ok := sub["$ref"].(string); ok {
				target = schemaNamed(t, doc, strings.TrimPrefix(ref, "#/components/schemas/"))
			}
			switch {
			case f.kind != "":
			case target != nil && target["properties"] != nil && required[name]:
				f.kind = "required-object"
			case target != nil && target["properties"] != nil:
				f.kind = "object"
			case p["$ref"] == "#/components/schemas/Decimal":
				f.kind = "decimal"
			case p["$ref"] == "#/components/schemas/Fecha":
				f.kind = "date"
			case p["$ref"] == "#/components/schemas/TipoCFE", p["type"] == "integer":
				f.kind = "integer"
			case p["type"] == "string":
				f.kind = "string"
			default:
				t.Fatalf("%s: a property of a kind this test does not know: %v", path, p)
			}
			out = append(out, f)
			if target != nil && target["properties"] != nil {
				walk(target, path+".", depth+1)
			}
		}
	}
	walk(schemaNamed(t, doc, "SignRequest"), "", 0)
	sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out
}

// valueForms are the JSON values the agreement test puts in each kind of
// field. Integer fields get 111, which every integer of the request may
// hold as far as form goes (tipoCfe's range is 101-299).
//
// Left out on purpose, because the independent validator is not the
// description's dialect there or the description cannot say it: a string
// ending in a newline ("5\n": Python's re lets $ match before it, ECMA-262's
// $ does not; the decoder refuses it, see cfe's TestDecodeRequest_decimalForms),
// JSON numbers beyond the decoder's range guard (1e31: a JSON Schema cannot
// bound a number's written form), dates that have the form but do not exist
// ("2026-02-30": the validator does not assert format "date"), and null,
// which the description says in words is the same as absent everywhere.
var valueForms = map[string][]string{
	"decimal": {
		`152.50`, `0`, `-0`, `0.000`, `1e3`, `1E3`, `1.5e+2`, `-2.5E-1`, `12E0`,
		`"152.50"`, `"-3"`, `"007"`, `"0.000"`, `"-0"`, `"0.` + strings.Repeat("0", 29) + `1"`, `"` + strings.Repeat("9", 40) + `"`,
		`"1e3"`, `"1E3"`, `"+5"`, `".5"`, `"-.5"`, `"5."`, `"5.e1"`, `" 5"`, `"5 "`, `"\t5"`, `""`, `"-"`, `"1,5"`,
		`"1.2.3"`, `"0x10"`, `"NaN"`, `"Infinity"`, `"١٢"`, `"0.` + strings.Repeat("0", 30) + `1"`,
		`"` + strings.Repeat("9", 41) + `"`,
		`[]`, `{}`, `[1]`, `["1"]`, `true`,
	},
	"integer":         {`111`, `111.0`, `1.11e2`, `11100E-2`, `111.5`, `1.115e2`, `"111"`, `""`, `[]`, `{}`, `[111]`, `true`},
	"string":          {`"x"`, `""`, `5`, `[]`, `{}`, `["x"]`, `true`},
	"date":            {`"2026-11-24"`, `"2026-1-5"`, `"24/11/2026"`, `20261124`, `[]`, `{}`, `true`},
	"object":          {`{}`, `[]`, `[{}]`, `[1]`, `"x"`, `5`, `true`},
	"required-object": {`[]`, `[{}]`, `"x"`, `5`, `true`},
	"list":            {`[]`, `[{}]`, `[[]]`, `["x"]`, `[5]`, `{}`, `"x"`, `5`},
	"text-list":       {`[]`, `["x"]`, `[[]]`, `[5]`, `[{}]`, `{}`, `"x"`},
	"ignored":         {`5`, `"x"`, `[]`, `{}`, `true`},
}

// bodyWith returns a signing request that the schema and the decoder both
// accept, except for form placed at path (a schema path, lists written []:
// each list on the way gets one element).
func bodyWith(t *testing.T, path, form string) string {
	t.Helper()
	const mark = "\x00form\x00"
	root := map[string]any{"cfe": map[string]any{"idDoc": map[string]any{"tipoCfe": 101}, "detalles": []any{}}}
	var at any = root
	segs := strings.Split(path, ".")
	for i, seg := range segs {
		obj := at.(map[string]any)
		name, list := strings.CutSuffix(seg, "[]")
		if i == len(segs)-1 {
			obj[name] = mark
			break
		}
		next, _ := obj[name].(map[string]any)
		if list {
			next = map[string]any{}
			obj[name] = []any{next}
		} else if next == nil {
			next = map[string]any{}
			obj[name] = next
		}
		at = next
	}
	b, err := json.Marshal(root)
	if err != nil {
		t.Fatal(err)
	}
	quoted, _ := json.Marshal(mark)
	return strings.Replace(string(b), string(quoted), form, 1)
}

// TestOpenAPI_ValueFormsMatchDecoder is the value half of
// TestOpenAPI_RequestMatchesDecoder: for every field of the request, each
// form of valueForms for its kind (exponents, signs, leading and trailing
// points, spaces, [] and {} where an amount, an object or a list goes, ...)
// is accepted by cfe.DecodeRequest exactly when the schema of POST /sign-cfe
// accepts it under an independent JSON Schema validator; and when the
// decoder refuses it, it names the field.
func TestOpenAPI_ValueFormsMatchDecoder(t *testing.T) {
	t.Parallel()
	doc := openAPIDoc(t)
	decimal := schemaNamed(t, doc, "Decimal")
	if decimal["pattern"] != cfe.DecimalPattern || decimal["maxLength"] != float64(40) {
		t.Errorf("schema Decimal has pattern %v, maxLength %v; the decoder reads strings of %s, at most 40 characters",
			decimal["pattern"], decimal["maxLength"], cfe.DecimalPattern)
	}
	fields := schemaValueFields(t, doc)
	count := map[string]int{}
	for _, f := range fields {
		count[f.kind]++
	}
	if count["decimal"] < 35 || count["integer"] < 30 || count["object"] != 4 || count["list"] < 10 {
		t.Fatalf("the walk found %v fields by kind: it misses some", count)
	}

	type trial struct {
		field valueField
		form  string
		file  string
		err   error
	}
	dir := t.TempDir()
	var trials []trial
	var files []string
	for _, f := range fields {
		for i, form := range valueForms[f.kind] {
			body := bodyWith(t, f.path, form)
			file := filepath.Join(dir, fmt.Sprintf("%s-%d.json", strings.NewReplacer("[]", "", ".", "_").Replace(f.path), i))
			if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := cfe.DecodeRequest(strings.NewReader(body))
			trials = append(trials, trial{f, form, file, err})
			files = append(files, file)
		}
	}
	verdict := validateWithJSONSchema(t, "SignRequest", files)
	refusedBoth := 0
	for _, tr := range trials {
		schemaOK := verdict[tr.file] == "OK"
		if verdict[tr.file] == "" {
			t.Fatalf("no verdict of the validator for %s", tr.file)
		}
		switch {
		case schemaOK && tr.err != nil:
			t.Errorf("%s = %s: openapi.json accepts it, the decoder refuses it: %v %v", tr.field.path, tr.form, tr.err, cfe.ErrorFields(tr.err))
		case !schemaOK && tr.err == nil:
			t.Errorf("%s = %s: the decoder accepts it, openapi.json refuses it: %s", tr.field.path, tr.form, verdict[tr.file])
		case tr.err != nil:
			refusedBoth++
			if cfe.ErrorCode(tr.err) != cfe.EINVALID || cfe.RespuestaOf(tr.err) != cfe.RespRechazoValidacion ||
				!namesField(tr.err, strings.ReplaceAll(tr.field.path, "[]", "[0]")) {
				t.Errorf("%s = %s: refused without 01 naming the field: %v %v", tr.field.path, tr.form, tr.err, cfe.ErrorFields(tr.err))
			}
		}
	}
	t.Logf("%d forms over %d fields (%v by kind): %d refused by both", len(trials), len(fields), count, refusedBoth)
	if refusedBoth < len(trials)/3 {
		t.Errorf("only %d of %d forms are refused: the trials prove little", refusedBoth, len(trials))
	}
}

// namesField reports whether err has a field error on campo or inside it
// (an element of a list: campo[0]).
func namesField(err error, campo string) bool {
	for _, f := range cfe.ErrorFields(err) {
		if f.Campo == campo || strings.HasPrefix(f.Campo, campo+"[") || strings.HasPrefix(f.Campo, campo+".") {
			return true
		}
	}
	return false
}
