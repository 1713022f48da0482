package cfe

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxUUIDLen is the longest uuid (the caller's idempotency key) a signing
// request may carry, in characters. It is the hosted service's limit, so that
// every CFE the agent signs can also be delivered there.
const MaxUUIDLen = 64

// CheckUUID checks the uuid of a CFE to sign: present, at most MaxUUIDLen
// characters, and printable text (it is a storage key, logged and shown on the
// status page). The issuer runs it before a number is reserved and the store
// again before it writes, so the two can never disagree.
func CheckUUID(id string) []FieldError {
	switch n := utf8.RuneCountInString(id); {
	case id == "":
		return []FieldError{{"uuid", "es obligatorio"}}
	case !utf8.ValidString(id):
		return []FieldError{{"uuid", invalidUTF8}}
	case n > MaxUUIDLen:
		return []FieldError{{"uuid", fmt.Sprintf("admite a lo sumo %d caracteres (tiene %d), el límite del servicio en la nube", MaxUUIDLen, n)}}
	}
	for _, r := range id {
		if r < 0x20 || r == 0x7F || r == 0xFFFD || r == 0xFFFE || r == 0xFFFF {
			return []FieldError{{"uuid", "contiene caracteres no admitidos (caracteres de control o de reemplazo)"}}
		}
	}
	return nil
}

const invalidUTF8 = "no es texto UTF-8 válido tal como se recibió (bytes inválidos o un sustituto \\uD800–\\uDFFF " +
	"sin pareja): envíe el texto en UTF-8"

// invalidTextFields names the JSON strings of body (values and object keys)
// that are not valid UTF-8 as received: raw bytes that are not UTF-8, or \u
// escapes of a lone surrogate. encoding/json silently replaces both with
// U+FFFD, so they must be found in the raw bytes before decoding. Paths are
// written as the strict decoder writes them (cfe.detalles[1].nombreItem).
//
// It is cheap for the bodies that need no walk: the caller runs it only when
// needsTextWalk reports true.
func invalidTextFields(body []byte) []FieldError {
	type frame struct {
		path    string
		array   bool
		index   int
		key     string
		wantKey bool
	}
	var (
		stack []*frame
		probs problems
		prev  int64
	)
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err != nil {
			break // a syntax error is reported by the decoding proper
		}
		end := dec.InputOffset()
		raw := bytes.TrimLeft(body[prev:end], " \t\r\n,:")
		prev = end
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			continue
		}
		if top != nil && !top.array && top.wantKey {
			key, _ := tok.(string)
			if badJSONString(raw) {
				probs.add(joinPath(top.path, key), "el nombre del campo "+invalidUTF8)
			}
			top.key, top.wantKey = key, false
			continue
		}
		path := ""
		if top != nil {
			if top.array {
				path = fmt.Sprintf("%s[%d]", top.path, top.index)
				top.index++
			} else {
				path = joinPath(top.path, top.key)
				top.wantKey = true
			}
		}
		switch t := tok.(type) {
		case json.Delim:
			stack = append(stack, &frame{path: path, array: t == '[', wantKey: t == '{'})
		case string:
			if badJSONString(raw) {
				probs.add(path, invalidUTF8)
			}
		}
	}
	return probs
}

func joinPath(parent, key string) string {
	if parent == "" {
		return key
	}
	return parent + "." + key
}

// needsTextWalk reports whether body may hold text that is not valid UTF-8 as
// received: bytes that are not UTF-8, or a \u escape in the surrogate range.
func needsTextWalk(body []byte) bool {
	if !utf8.Valid(body) {
		return true
	}
	for i := bytes.Index(body, []byte(`\u`)); i >= 0; {
		if i+2 < len(body) && (body[i+2] == 'd' || body[i+2] == 'D') {
			return true // \uD800–\uDFFF; badJSONString tells a pair from a lone one
		}
		j := bytes.Index(body[i+2:], []byte(`\u`))
		if j < 0 {
			break
		}
		i += 2 + j
	}
	return false
}

// badJSONString reports whether raw, one JSON string token as it stands in the
// input (quotes included, already accepted by the JSON scanner), holds bytes
// that are not UTF-8 or a \u escape of a surrogate that is not part of a pair.
func badJSONString(raw []byte) bool {
	if !utf8.Valid(raw) {
		return true
	}
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		i++
		if i >= len(raw) || raw[i] != 'u' {
			continue // \" \\ \/ \b \f \n \r \t: the escaped byte is skipped
		}
		r, ok := hex4(raw, i+1)
		if !ok {
			return true
		}
		i += 4
		if !utf16.IsSurrogate(r) {
			continue
		}
		if r >= 0xDC00 {
			return true // a low surrogate with no high one before it
		}
		if i+6 < len(raw) && raw[i+1] == '\\' && raw[i+2] == 'u' {
			if low, ok := hex4(raw, i+3); ok && low >= 0xDC00 && low <= 0xDFFF {
				i += 6
				continue
			}
		}
		return true // a high surrogate with no low one after it
	}
	return false
}

// hex4 reads the four hexadecimal digits of a \u escape at raw[at:].
func hex4(raw []byte, at int) (rune, bool) {
	if at+4 > len(raw) {
		return 0, false
	}
	var r rune
	for _, c := range raw[at : at+4] {
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
