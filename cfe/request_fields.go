package cfe

import (
	"reflect"
	"sort"
	"strings"
)

// Kinds of RequestField.
const (
	FieldCanonical = "field"   // a field of the request shape, by its JSON name
	FieldAlias     = "alias"   // another name production clients send for a field
	FieldIgnored   = "ignored" // a name accepted and ignored
)

// RequestField is one name DecodeRequest accepts, by its path from the body's
// root: "uuid", "cfe.idDoc.tipoCfe", "cfe.detalles[].precioUnitario" (a list's
// elements are written []).
type RequestField struct {
	Path string
	Kind string // FieldCanonical, FieldAlias or FieldIgnored
	// Of is, for an alias, the path of the field it is another name of.
	Of string
}

// RequestFields lists every name DecodeRequest accepts, sorted by path: the
// request shape's fields, their aliases and the names it accepts and
// ignores. It is read from the same tables the decoder uses, so that a
// description of the request (the local module's OpenAPI schema) can be
// checked against it.
func RequestFields() []RequestField {
	out := make([]RequestField, 0, 160)
	for _, name := range hostedOnlyFields {
		out = append(out, RequestField{Path: name, Kind: FieldIgnored})
	}
	walkRequestFields(reflect.TypeFor[Request](), "", &out)
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// walkRequestFields appends the names the struct type t accepts, under prefix,
// and those of the structs its fields hold.
func walkRequestFields(t reflect.Type, prefix string, out *[]RequestField) {
	fields := jsonFields(t)
	for name, f := range fields.byName {
		path := prefix + name
		if f.ignored {
			*out = append(*out, RequestField{Path: path, Kind: FieldIgnored})
			continue
		}
		sf := t.Field(f.index)
		canonical, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if name != canonical {
			*out = append(*out, RequestField{Path: path, Kind: FieldAlias, Of: prefix + canonical})
			continue
		}
		*out = append(*out, RequestField{Path: path, Kind: FieldCanonical})
		ft, sub := sf.Type, path
		for ft.Kind() == reflect.Pointer || ft.Kind() == reflect.Slice {
			if ft.Kind() == reflect.Slice {
				sub += "[]"
			}
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Struct && ft != decimalType && ft != dateType {
			walkRequestFields(ft, sub+".", out)
		}
	}
}
