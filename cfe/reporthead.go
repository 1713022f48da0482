package cfe

import (
	"bytes"
	"errors"
	"fmt"
	"html"
	"time"

	"github.com/shopspring/decimal"
)

// reportHead is what the daily report reads of a signed CFE: its zone H
// signature time and its Encabezado's IdDoc, Emisor and Totales fields.
type reportHead struct {
	TmstFirma     time.Time
	Type          Type
	Serie         string
	Nro           int64
	FchEmis       Date
	IndPagCta3ros int
	RUCEmisor     string
	CdgDGISucur   int
	TpoMoneda     string
	TpoCambio     *decimal.Decimal

	MntNoGrv, MntExpoyAsim, MntImpuestoPerc, MntIVaenSusp   *decimal.Decimal
	MntNetoIvaTasaMin, MntNetoIVATasaBasica, MntNetoIVAOtra *decimal.Decimal
	IVATasaMin, IVATasaBasica                               *decimal.Decimal
	MntIVATasaMin, MntIVATasaBasica, MntIVAOtra             *decimal.Decimal
	MntTotRetenido, MntTotCredFisc                          *decimal.Decimal
	vals                                                    [16]decimal.Decimal
}

// readReportHead reads h from a signed CFE without building a tree: a
// report reads thousands of CFEs and needs a few fields of each. It scans
// tags by their bytes (any namespace prefix), skipping the XML declaration,
// comments and processing instructions, and stops at the end of the
// Encabezado, which follows TmstFirma (CFEType.xsd). Values are unescaped.
// It checks what the report relies on: the root is CFE, the fields parse.
// The signature itself is the store's business (every stored CFE was
// verified when it was signed).
func readReportHead(b []byte, h *reportHead) error {
	*h = reportHead{}
	var (
		stack   [8][]byte
		depth   int
		textAt  int
		nv      int
		inEnc   bool
		sawRoot bool
	)
	i := 0
	for {
		j := bytes.IndexByte(b[i:], '<')
		if j < 0 {
			return errors.New("el documento termina antes del fin del Encabezado")
		}
		lt := i + j
		if lt+1 >= len(b) {
			return errors.New("XML incompleto")
		}
		switch b[lt+1] {
		case '?':
			k := bytes.Index(b[lt:], []byte("?>"))
			if k < 0 {
				return errors.New("XML incompleto")
			}
			i = lt + k + 2
			continue
		case '!':
			if bytes.HasPrefix(b[lt:], []byte("<!--")) {
				k := bytes.Index(b[lt:], []byte("-->"))
				if k < 0 {
					return errors.New("XML incompleto")
				}
				i = lt + k + 3
				continue
			}
			return errors.New("el CFE contiene CDATA o declaraciones que el reporte no lee")
		case '/':
			gt := bytes.IndexByte(b[lt:], '>')
			if gt < 0 {
				return errors.New("XML incompleto")
			}
			q := b[lt+2 : lt+gt]
			for len(q) > 0 && (q[len(q)-1] == ' ' || q[len(q)-1] == '\t' || q[len(q)-1] == '\r' || q[len(q)-1] == '\n') {
				q = q[:len(q)-1]
			}
			name := localName(q)
			if depth == 0 || !bytes.Equal(name, stack[depth-1]) {
				return fmt.Errorf("XML mal formado: </%s> inesperado", name)
			}
			if err := h.field(stack[:depth], b[textAt:lt], &nv); err != nil {
				return err
			}
			depth--
			if inEnc && depth == 2 {
				return h.check()
			}
			i = lt + gt + 1
			continue
		}
		gt := tagEnd(b, lt)
		if gt < 0 {
			return errors.New("XML incompleto")
		}
		tag := b[lt+1 : gt]
		selfClose := len(tag) > 0 && tag[len(tag)-1] == '/'
		k := 0
		for k < len(tag) && tag[k] != ' ' && tag[k] != '\t' && tag[k] != '\r' && tag[k] != '\n' && tag[k] != '/' {
			k++
		}
		name := localName(tag[:k])
		if depth == 0 {
			if sawRoot || string(name) != "CFE" {
				return fmt.Errorf("el elemento raíz es <%s> y no <CFE>", name)
			}
			sawRoot = true
		}
		if !selfClose {
			if depth == len(stack) {
				return errors.New("el Encabezado del CFE tiene más niveles de los que admite el formato de DGI")
			}
			stack[depth] = name
			depth++
			if depth == 3 && string(name) == "Encabezado" {
				inEnc = true
			}
		}
		textAt = gt + 1
		i = gt + 1
	}
}

// tagEnd returns the offset of the '>' that ends the start tag at lt,
// skipping quoted attribute values; -1 when there is none.
func tagEnd(b []byte, lt int) int {
	var quote byte
	for k := lt + 1; k < len(b); k++ {
		c := b[k]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '>':
			return k
		}
	}
	return -1
}

func localName(q []byte) []byte {
	if k := bytes.IndexByte(q, ':'); k >= 0 {
		return q[k+1:]
	}
	return q
}

// field stores the text of the element path ends with, when the report
// needs it. path is CFE / doc / ... . It converts nothing it does not keep:
// a report reads thousands of CFEs.
func (h *reportHead) field(path [][]byte, raw []byte, nv *int) error {
	n := len(path)
	if n == 3 && string(path[2]) == "TmstFirma" {
		t, err := time.Parse(time.RFC3339, headText(raw))
		if err != nil {
			return fmt.Errorf("TmstFirma %q no es una fecha y hora", headText(raw))
		}
		h.TmstFirma = t
		return nil
	}
	if n != 5 || string(path[2]) != "Encabezado" {
		return nil
	}
	switch string(path[3]) {
	case "IdDoc":
		switch string(path[4]) {
		case "TipoCFE":
			v, err := headInt(raw, "IdDoc/TipoCFE")
			h.Type = Type(v)
			return err
		case "Serie":
			h.Serie = headText(raw)
		case "Nro":
			v, err := headInt(raw, "IdDoc/Nro")
			h.Nro = v
			return err
		case "FchEmis":
			d, err := ParseDate(headText(raw))
			if err != nil {
				return fmt.Errorf("IdDoc/FchEmis %q no es una fecha", headText(raw))
			}
			h.FchEmis = d
		case "IndPagCta3ros":
			v, err := headInt(raw, "IdDoc/IndPagCta3ros")
			h.IndPagCta3ros = int(v)
			return err
		}
	case "Emisor":
		switch string(path[4]) {
		case "RUCEmisor":
			h.RUCEmisor = headText(raw)
		case "CdgDGISucur":
			v, err := headInt(raw, "Emisor/CdgDGISucur")
			h.CdgDGISucur = int(v)
			return err
		}
	case "Totales":
		var dst **decimal.Decimal
		switch string(path[4]) {
		case "TpoMoneda":
			h.TpoMoneda = headText(raw)
			return nil
		case "TpoCambio":
			dst = &h.TpoCambio
		case "MntNoGrv":
			dst = &h.MntNoGrv
		case "MntExpoyAsim":
			dst = &h.MntExpoyAsim
		case "MntImpuestoPerc":
			dst = &h.MntImpuestoPerc
		case "MntIVaenSusp":
			dst = &h.MntIVaenSusp
		case "MntNetoIvaTasaMin":
			dst = &h.MntNetoIvaTasaMin
		case "MntNetoIVATasaBasica":
			dst = &h.MntNetoIVATasaBasica
		case "MntNetoIVAOtra":
			dst = &h.MntNetoIVAOtra
		case "IVATasaMin":
			dst = &h.IVATasaMin
		case "IVATasaBasica":
			dst = &h.IVATasaBasica
		case "MntIVATasaMin":
			dst = &h.MntIVATasaMin
		case "MntIVATasaBasica":
			dst = &h.MntIVATasaBasica
		case "MntIVAOtra":
			dst = &h.MntIVAOtra
		case "MntTotRetenido":
			dst = &h.MntTotRetenido
		case "MntTotCredFisc":
			dst = &h.MntTotCredFisc
		default:
			return nil
		}
		v, err := decimal.NewFromString(headText(raw))
		if err != nil {
			return fmt.Errorf("Totales/%s %q no es un número", path[4], headText(raw))
		}
		if *nv < len(h.vals) {
			h.vals[*nv] = v
			*dst = &h.vals[*nv]
			*nv++
		} else {
			*dst = &v
		}
	}
	return nil
}

// headInt reads a non-negative integer of up to 18 digits.
func headInt(raw []byte, name string) (int64, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || len(raw) > 18 {
		return 0, fmt.Errorf("%s %q no es un número entero", name, raw)
	}
	var v int64
	for _, c := range raw {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("%s %q no es un número entero", name, raw)
		}
		v = v*10 + int64(c-'0')
	}
	return v, nil
}

func (h *reportHead) check() error {
	if !h.Type.Valid() {
		return errors.New("el documento no tiene Encabezado/IdDoc/TipoCFE de un tipo de CFE conocido")
	}
	return nil
}

// headText returns raw's character data, trimmed and unescaped.
func headText(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if bytes.IndexByte(raw, '&') >= 0 {
		return html.UnescapeString(string(raw))
	}
	return string(raw)
}
