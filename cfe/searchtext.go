package cfe

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
)

// SearchText is what a shop searches a signed CFE by (the agent's /caja
// page): the receiver's name and document and the names of the lines.
type SearchText struct {
	Receiver string   // Receptor/RznSocRecep; "" when absent
	Document string   // Receptor/DocRecep or DocRecepExt; "" when absent
	Items    []string // Detalle/Item/NomItem, in line order
	Currency string   // Totales/TpoMoneda, UYU when absent (Totales.Currency)
}

// ReadSearchText reads the receiver's name and document, the lines' names
// and the currency of a signed CFE in one streaming pass, without building
// the model. Elements are matched by local name, whatever their namespace
// prefix. It returns EINVALID when b is not well-formed XML.
func ReadSearchText(signed []byte) (SearchText, error) {
	const op = "cfe.ReadSearchText"
	var st SearchText
	dec := xml.NewDecoder(bytes.NewReader(signed))
	dec.CharsetReader = xmlCharsetReader
	var path []string
	var text []byte
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			if st.Currency == "" {
				st.Currency = CurrencyUYU
			}
			return st, nil
		}
		if err != nil {
			return SearchText{}, &Error{Code: EINVALID, Op: op, Message: "el CFE no es XML legible", Err: fmt.Errorf("read: %w", err)}
		}
		switch el := tok.(type) {
		case xml.StartElement:
			path = append(path, el.Name.Local)
			text = text[:0]
			if el.Name.Local == "Signature" {
				if err := dec.Skip(); err != nil {
					return SearchText{}, &Error{Code: EINVALID, Op: op, Message: "el CFE no es XML legible", Err: err}
				}
				path = path[:len(path)-1]
			}
		case xml.CharData:
			text = append(text, el...)
		case xml.EndElement:
			n := len(path)
			if n >= 2 {
				v := strings.TrimSpace(string(text))
				switch parent, name := path[n-2], path[n-1]; {
				case parent == "Receptor" && name == "RznSocRecep":
					st.Receiver = v
				case parent == "Receptor" && (name == "DocRecep" || name == "DocRecepExt"):
					st.Document = v
				case parent == "Item" && name == "NomItem":
					st.Items = append(st.Items, v)
				case parent == "Totales" && name == "TpoMoneda":
					st.Currency = v
				}
			}
			if n > 0 {
				path = path[:n-1]
			}
			text = text[:0]
		}
	}
}

// SearchTextOf returns what ReadSearchText reads from the signed XML of c,
// taken from the model instead: the issuer has it, and parsing the XML
// again cost about a tenth of a sale's time outside the signature.
func SearchTextOf(c *CFE) SearchText {
	st := SearchText{Currency: c.Totales.Currency()}
	if r := c.Receptor; r != nil {
		st.Receiver = strings.TrimSpace(r.RznSocRecep)
		st.Document = strings.TrimSpace(r.DocRecep + r.DocRecepExt)
	}
	for _, it := range c.Items {
		if n := strings.TrimSpace(it.NomItem); n != "" {
			st.Items = append(st.Items, n)
		}
	}
	return st
}
