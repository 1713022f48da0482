package cfe

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/shopspring/decimal"
)

// hostedOnlyFields are top-level fields of the hosted service's emission body
// that the agent accepts and ignores (see Request).
var hostedOnlyFields = []string{
	"idEmpresa", "codComercio", "codTerminal", "destinatariosPdf",
	"origen", "esAppMovil", "idComprobanteGuardado", "idVendedor", "idCaja",
	"registrarComprobanteInterno",
}

// DecodeRequest reads one emission request (a JSON object) from r, of any
// size: limiting it is the caller's job. Amounts may be JSON numbers, in any
// of JSON's forms, or strings of the plain form DecimalPattern, and are read
// as decimals, never through float64; integers are JSON numbers whose value
// is whole. These are the forms the local module's description (openapi.json)
// gives, and a test holds the two to each other. A field of an unexpected
// type or unknown to the request shape is an error, except the hosted-only
// top-level fields, which are ignored. An empty JSON array stands for an
// absent optional object (cfe, emisor, receptor, totales, complementoFiscal),
// as PHP clients send empty arrays; anywhere else (idDoc, a list's element,
// an amount, a date) it is the wrong kind of value and an error. An empty
// object {} also stands for an absent complementoFiscal on a type that has
// no zone K. Payment means and references also take the names production
// clients of the hosted service send (the alias tags of RequestMedioPago and
// RequestReferencia); the names of theirs that DGI's CFE has no place for are
// accepted and ignored, and any other unknown name is still an error.
//
// Text must be valid UTF-8 as received: a string with bytes that are not UTF-8
// or with a \u escape of a lone surrogate is refused, naming its field,
// instead of being signed with U+FFFD in place of the caller's characters (a
// POS that sends Latin-1 must find out before its receipts are signed).
//
// It returns EINVALID for malformed JSON, and otherwise with one FieldError per
// offending field, named by its path (cfe.detalles[1].cantidad).
func DecodeRequest(r io.Reader) (*Request, error) {
	const op = "cfe.DecodeRequest"
	raw, err := io.ReadAll(r)
	if err != nil {
		return nil, &Error{Code: EINVALID, Op: op, Respuesta: RespRechazoValidacion,
			Message: "no se pudo leer el cuerpo de la solicitud", Err: err}
	}
	if needsTextWalk(raw) {
		if fields := invalidTextFields(raw); len(fields) > 0 {
			return nil, Invalid(op, fields...)
		}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var body any
	if err := dec.Decode(&body); err != nil {
		return nil, malformed(op, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, &Error{Code: EINVALID, Op: op, Respuesta: RespRechazoValidacion,
			Message: "el cuerpo debe contener un único objeto JSON", Err: err}
	}
	obj, ok := body.(map[string]any)
	if !ok {
		return nil, &Error{Code: EINVALID, Op: op, Respuesta: RespRechazoValidacion,
			Message: "el cuerpo debe ser un objeto JSON"}
	}
	for _, k := range hostedOnlyFields {
		delete(obj, k)
	}
	var req Request
	var d strictDecoder
	d.decode("", obj, reflect.ValueOf(&req).Elem())
	if req.CFE == nil {
		d.probs.add("cfe", "obligatorio: el comprobante a emitir")
	} else if rc := req.CFE; rc.ComplementoFiscal != nil && !hasComplFiscal(rc.IdDoc.TipoCfe) {
		if body, _ := obj["cfe"].(map[string]any); isEmptyObject(body["complementoFiscal"]) {
			rc.ComplementoFiscal = nil // {} where the type has no zone K: absent
		}
	}
	if err := d.probs.err(op); err != nil {
		return nil, err
	}
	return &req, nil
}

// malformed explains a JSON syntax error to the caller; the decoder's own
// (English) message goes to the logs through Err.
func malformed(op string, err error) *Error {
	e := &Error{Code: EINVALID, Op: op, Respuesta: RespRechazoValidacion, Err: err}
	var syntax *json.SyntaxError
	switch {
	case errors.Is(err, io.EOF):
		e.Message = "el cuerpo está vacío: se espera un objeto JSON"
	case errors.Is(err, io.ErrUnexpectedEOF):
		e.Message = "el cuerpo JSON está incompleto"
	case errors.As(err, &syntax):
		e.Message = fmt.Sprintf("el cuerpo no es un JSON válido (error cerca del byte %d)", syntax.Offset)
	default:
		e.Message = "no se pudo leer el cuerpo JSON"
	}
	return e
}

// strictDecoder assigns a decoded JSON tree to a request struct, field by
// field, and records a FieldError for every value that does not fit, so that
// one answer names every faulty field.
type strictDecoder struct{ probs problems }

var (
	decimalType = reflect.TypeFor[decimal.Decimal]()
	dateType    = reflect.TypeFor[Date]()
)

// Numbers longer than maxNumberLen or with an exponent beyond ±maxExponent
// cannot be a DGI amount; refusing them keeps arithmetic on hostile input cheap.
const (
	maxNumberLen = 40
	maxExponent  = 30
)

func (d *strictDecoder) decode(path string, v any, dst reflect.Value) {
	if v == nil {
		return // null is the same as absent
	}
	switch dst.Type() {
	case decimalType:
		if x, ok := d.decimal(path, v); ok {
			dst.Set(reflect.ValueOf(x))
		}
		return
	case dateType:
		s, ok := v.(string)
		date, err := ParseDate(s)
		if !ok || err != nil {
			d.probs.add(path, "se espera una fecha AAAA-MM-DD")
			return
		}
		dst.Set(reflect.ValueOf(date))
		return
	}
	switch dst.Kind() {
	case reflect.Pointer:
		if isRequestStruct(dst.Type().Elem()) && isEmptyArray(v) {
			return // an optional object sent as PHP's empty array: absent
		}
		p := reflect.New(dst.Type().Elem())
		d.decode(path, v, p.Elem())
		dst.Set(p)
	case reflect.Struct:
		d.object(path, v, dst)
	case reflect.Slice:
		arr, ok := v.([]any)
		if !ok {
			d.probs.add(path, "se espera una lista")
			return
		}
		s := reflect.MakeSlice(dst.Type(), len(arr), len(arr))
		for i, e := range arr {
			d.decode(fmt.Sprintf("%s[%d]", path, i), e, s.Index(i))
		}
		dst.Set(s)
	case reflect.String:
		s, ok := v.(string)
		if !ok {
			d.probs.add(path, "se espera un texto")
			return
		}
		dst.SetString(s)
	case reflect.Int, reflect.Int64:
		i, ok := d.integer(path, v)
		if !ok {
			return
		}
		if dst.OverflowInt(i) {
			d.probs.add(path, "se espera un número entero")
			return
		}
		dst.SetInt(i)
	default:
		panic("cfe: request field of unsupported type " + dst.Type().String())
	}
}

// object assigns a JSON object to a struct, by the fields' json names.
func (d *strictDecoder) object(path string, v any, dst reflect.Value) {
	obj, ok := v.(map[string]any)
	if !ok {
		d.probs.add(path, "se espera un objeto")
		return
	}
	fields := jsonFields(dst.Type())
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var seen map[int]string // field index → the name that set it, when aliases exist
	for _, k := range keys {
		sub := k
		if path != "" {
			sub = path + "." + k
		}
		f, known := fields.byName[k]
		switch {
		case !known:
			d.probs.add(sub, "campo desconocido")
			continue
		case f.ignored:
			continue
		case fields.aliased:
			if other, dup := seen[f.index]; dup {
				d.probs.add(sub, "es otro nombre de %s, que también se envió: envíe uno solo", other)
				continue
			}
			if seen == nil {
				seen = make(map[int]string)
			}
			seen[f.index] = k
		}
		d.decode(sub, obj[k], dst.Field(f.index))
	}
}

// decimal reads an amount from a JSON number or a string, exactly. A JSON
// number may take any of JSON's forms (12.5, -0, 1.25e1): JSON's grammar
// already refuses +5, .5 and 5., and a description typed "number" cannot
// tell 1.25e1 from 12.5. A string must be the plain form the local module's
// description gives (DecimalPattern): "1e3", "+5", ".5", "5.", " 5" and ""
// are refused rather than read as what a lenient parser makes of them.
func (d *strictDecoder) decimal(path string, v any) (decimal.Decimal, bool) {
	var s string
	switch x := v.(type) {
	case json.Number:
		s = string(x)
	case string:
		s = x
		if !plainDecimal(s) {
			d.probs.add(path, "%s", msgDecimalText)
			return decimal.Decimal{}, false
		}
	default:
		d.probs.add(path, "se espera un número")
		return decimal.Decimal{}, false
	}
	if len(s) > maxNumberLen {
		d.probs.add(path, "número fuera de rango")
		return decimal.Decimal{}, false
	}
	x, err := decimal.NewFromString(s)
	switch {
	case err != nil:
		d.probs.add(path, "se espera un número, por ejemplo 1234.56")
	case x.Exponent() < -maxExponent || x.Exponent() > maxExponent:
		d.probs.add(path, "número fuera de rango")
	default:
		return x, true
	}
	return decimal.Decimal{}, false
}

// msgDecimalText explains the one form an amount sent as a string may take.
const msgDecimalText = "se espera un número, por ejemplo 1234.56: como texto, solo dígitos con un punto decimal " +
	"y un signo - opcionales (sin exponente, signo +, espacios ni punto al principio o al final)"

// DecimalPattern is the form of an amount sent as a JSON string, as the local
// module's description (openapi.json, schema Decimal, with its maxLength of
// maxNumberLen) writes it. plainDecimal checks the form; the bound on the
// decimals is the maxExponent check every amount gets.
const DecimalPattern = `^-?[0-9]+(\.[0-9]{1,30})?$`

// plainDecimal reports whether s is an optional minus, ASCII digits, and
// optionally a point followed by more digits (DecimalPattern without its
// bound on the number of decimals).
func plainDecimal(s string) bool {
	s = strings.TrimPrefix(s, "-")
	whole, frac, point := strings.Cut(s, ".")
	return allDigits(whole) && (!point || allDigits(frac))
}

// integer reads a whole number from a JSON number. Like the description's
// "integer" (JSON Schema: a number whose fractional part is zero), it takes
// the number's value whatever its form: 101, 101.0 and 1.01e2 are all 101;
// 101.5, strings and numbers beyond int64 are refused.
func (d *strictDecoder) integer(path string, v any) (int64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		d.probs.add(path, "se espera un número entero")
		return 0, false
	}
	if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		return i, true
	}
	if len(n) <= maxNumberLen {
		x, err := decimal.NewFromString(string(n))
		if err == nil && x.Exponent() >= -maxExponent && x.Exponent() <= maxExponent && x.IsInteger() &&
			!x.LessThan(minInt64) && !x.GreaterThan(maxInt64) {
			return x.IntPart(), true
		}
	}
	d.probs.add(path, "se espera un número entero")
	return 0, false
}

var (
	minInt64 = decimal.NewFromInt(math.MinInt64)
	maxInt64 = decimal.NewFromInt(math.MaxInt64)
)

// isRequestStruct reports whether t is one of the request's object shapes,
// rather than a value read from a scalar (an amount, a date).
func isRequestStruct(t reflect.Type) bool {
	return t.Kind() == reflect.Struct && t != decimalType && t != dateType
}

func isEmptyObject(v any) bool {
	o, ok := v.(map[string]any)
	return ok && len(o) == 0
}

// hasComplFiscal reports whether type t may carry zone K (complemento
// fiscal): a sale on behalf of others (131-133, 141-143) or an e-Boleta
// (151-153, for a purchase of foreign currency on behalf of others), and
// their contingency forms. An unknown type is given the benefit of the
// doubt, so that the validator names it.
func hasComplFiscal(t Type) bool {
	info, ok := t.Info()
	if !ok {
		return true
	}
	switch electronicCode(info.Base) {
	case ETicketCtaAjena, EFacturaCtaAjena, EBoleta:
		return true
	}
	return false
}

func isEmptyArray(v any) bool {
	a, ok := v.([]any)
	return ok && len(a) == 0
}

var fieldCache sync.Map // reflect.Type → *structFields

// structFields are the names a request struct accepts.
type structFields struct {
	byName  map[string]structField
	aliased bool // some field has an alias: two names may set one field
}

// structField is one accepted name: a field's index, or a name accepted and
// ignored.
type structField struct {
	index   int
	ignored bool
}

// ignorer is a request struct that accepts, and ignores, names production
// clients of the hosted service send where DGI's CFE has no place for them.
type ignorer interface{ ignoredFields() []string }

// jsonFields maps the json names of t's fields, and their alias tags (other
// names production clients send for the same field), to their indexes, and
// the names t ignores to ignored entries.
func jsonFields(t reflect.Type) *structFields {
	if m, ok := fieldCache.Load(t); ok {
		return m.(*structFields)
	}
	sf := &structFields{byName: make(map[string]structField, t.NumField())}
	for i := range t.NumField() {
		tag := t.Field(i).Tag
		name, _, _ := strings.Cut(tag.Get("json"), ",")
		if name != "" && name != "-" {
			sf.byName[name] = structField{index: i}
		}
		if alias := tag.Get("alias"); alias != "" {
			sf.byName[alias] = structField{index: i}
			sf.aliased = true
		}
	}
	if ig, ok := reflect.Zero(t).Interface().(ignorer); ok {
		for _, name := range ig.ignoredFields() {
			sf.byName[name] = structField{ignored: true}
		}
	}
	fieldCache.Store(t, sf)
	return sf
}
