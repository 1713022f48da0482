package cfe

import (
	"reflect"
	"strings"
	"testing"
)

// textStep is one step of a path to a string field of a request: a struct
// field (its index and JSON name) or, when field is -1, a list's first element.
type textStep struct {
	field int
	name  string
}

// requestTextPaths lists the path to every string field under t, found by
// reflection so that a field added to the request later is covered too.
func requestTextPaths(t reflect.Type, prefix []textStep, out *[][]textStep) {
	switch t.Kind() {
	case reflect.Pointer:
		requestTextPaths(t.Elem(), prefix, out)
	case reflect.Slice:
		requestTextPaths(t.Elem(), append(prefix[:len(prefix):len(prefix)], textStep{-1, "[0]"}), out)
	case reflect.Struct:
		if t == reflect.TypeFor[Date]() {
			return
		}
		for i := range t.NumField() {
			name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
			if name != "" && name != "-" {
				requestTextPaths(t.Field(i).Type, append(prefix[:len(prefix):len(prefix)], textStep{i, "." + name}), out)
			}
		}
	case reflect.String:
		*out = append(*out, prefix)
	}
}

// setTextPath sets the string at path under v to s, allocating the objects
// and the first list element on the way when the request has none.
func setTextPath(v reflect.Value, path []textStep, s string) {
	for _, st := range path {
		for v.Kind() == reflect.Pointer {
			if v.IsNil() {
				v.Set(reflect.New(v.Type().Elem()))
			}
			v = v.Elem()
		}
		if st.field < 0 {
			if v.Len() == 0 {
				v.Set(reflect.MakeSlice(v.Type(), 1, 1))
			}
			v = v.Index(0)
		} else {
			v = v.Field(st.field)
		}
	}
	v.SetString(s)
}

// TestValidate_EveryTextFieldIsBounded puts 10 001 characters in each text
// field of the request, one at a time, in a valid request of each family:
// every such request is refused (no text reaches a signed CFE unbounded, nor
// is silently dropped), and every field is named with its limit by at least
// one family that admits it.
func TestValidate_EveryTextFieldIsBounded(t *testing.T) {
	t.Parallel()
	var paths [][]textStep
	requestTextPaths(reflect.TypeFor[RequestCFE](), nil, &paths)
	if len(paths) < 40 {
		t.Fatalf("found %d text fields in the request; the walk is broken", len(paths))
	}
	long := strings.Repeat("a", 10001)
	named := map[string]bool{}
	for _, typ := range []Type{ETicket, ETicketNC, EFactura, EFacturaExp, ERemitoExp, ETicketCtaAjena, EBoleta, ERemito, EResguardo} {
		for _, p := range paths {
			campo := "cfe"
			for _, st := range p {
				campo += st.name
			}
			r := validRequest(typ)
			setTextPath(reflect.ValueOf(r.CFE).Elem(), p, long)
			_, err := issue(r)
			if ErrorCode(err) != EINVALID {
				t.Errorf("%d: %s of 10 001 characters: got %v, want a refusal", typ, campo, err)
				continue
			}
			for _, f := range ErrorFields(err) {
				if f.Campo == campo {
					named[campo] = true
				}
			}
		}
	}
	// Declared totals repeat what the lines carry: a code there must equal a
	// line's code, itself bounded, or the totals do not match (refused above).
	named["cfe.totales.retencionesPercepciones[0].codigo"] = true
	for _, p := range paths {
		campo := "cfe"
		for _, st := range p {
			campo += st.name
		}
		if !named[campo] {
			t.Errorf("no family names %s when it has 10 001 characters", campo)
		}
	}
}

func TestValidate_AdendaLimit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		adenda string
		want   string // a fragment of the adenda's field error; "" when accepted
	}{
		{"empty", "", ""},
		{"at the limit, in characters not bytes", strings.Repeat("ñ", MaxAdenda), ""},
		{"one over", strings.Repeat("a", MaxAdenda+1), "como máximo 10000 caracteres (tiene 10001)"},
		{"a megabyte", strings.Repeat("x", 1<<20), "como máximo 10000 caracteres"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := validRequest(ETicket)
			r.Adenda = tc.adenda
			_, err := issue(r)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			wantField(t, err, "adenda", tc.want)
		})
	}
}
