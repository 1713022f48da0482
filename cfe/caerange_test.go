package cfe

import (
	"errors"
	"slices"
	"testing"
	"time"
)

// validRange is an e-Ticket range as DGI's CAE file describes it: DGI's test
// RUC, an 11-digit CAE number "90" + year 26 + sequence + check digit, valid
// two years.
func validRange() CAERange {
	return CAERange{RUC: "219999830019", Type: ETicket, Serie: "A", DNro: 1, HNro: 1000, CAEID: "90260012345",
		Autorizado:  Date{Year: 2026, Month: time.January, Day: 5},
		Vencimiento: Date{Year: 2028, Month: time.January, Day: 5}}
}

func TestCAERange_Validate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name           string
		edit           func(*CAERange)
		campo, message string // "" when the range is valid
	}{
		{"DGI's shape", func(*CAERange) {}, "", ""},
		{"one number", func(r *CAERange) { r.DNro, r.HNro = 7, 7 }, "", ""},
		{"up to the last number", func(r *CAERange) { r.DNro, r.HNro = 1, MaxNro }, "", ""},
		{"serie digit and letter", func(r *CAERange) { r.Serie = "1A" }, "", ""},
		{"serie of two letters", func(r *CAERange) { r.Serie = "ZZ" }, "", ""},
		{"credit note type", func(r *CAERange) { r.Type = EFacturaNC }, "", ""},
		{"expires the day it is authorized", func(r *CAERange) { r.Vencimiento = r.Autorizado }, "", ""},
		{"exonerated with its reason", func(r *CAERange) { r.CAEEspecial, r.CausalCAEEsp = 1, 123 }, "", ""},
		{"IVA mínimo", func(r *CAERange) { r.CAEEspecial = 2 }, "", ""},
		{"Monotributo MIDES", func(r *CAERange) { r.CAEEspecial = 4 }, "", ""},

		{"no RUC", func(r *CAERange) { r.RUC = "" }, "RucE", `"" no es un RUC válido`},
		// 219999830019 has check digit 9 (see TestValidRUC).
		{"RUC with a wrong check digit", func(r *CAERange) { r.RUC = "219999830018" }, "RucE", "dígito verificador"},
		{"unknown type", func(r *CAERange) { r.Type = 104 }, "TCFE", "104 no es un tipo de CFE de DGI"},
		{"contingency type", func(r *CAERange) { r.Type = 201 }, "", ""},
		{"no serie", func(r *CAERange) { r.Serie = "" }, "Serie", `"" no es una serie válida`},
		{"lower-case serie", func(r *CAERange) { r.Serie = "a" }, "Serie", `"a" no es una serie válida`},
		{"serie of three letters", func(r *CAERange) { r.Serie = "ABC" }, "Serie", "no es una serie válida"},
		{"serie starting with 0", func(r *CAERange) { r.Serie = "0A" }, "Serie", "no es una serie válida"},
		{"first number 0", func(r *CAERange) { r.DNro = 0 }, "DNro", "0 está fuera de 1 a 9999999"},
		{"negative first number", func(r *CAERange) { r.DNro = -1 }, "DNro", "fuera de 1 a 9999999"},
		{"last number of 8 digits", func(r *CAERange) { r.HNro = 10_000_000 }, "HNro", "10000000 está fuera de 1 a 9999999"},
		{"last below first", func(r *CAERange) { r.DNro, r.HNro = 50, 49 }, "HNro", "termina (49) antes de empezar (50)"},
		{"no CAE number", func(r *CAERange) { r.CAEID = "" }, "NA", "de 11 dígitos"},
		{"CAE number of 10 digits", func(r *CAERange) { r.CAEID = "9026001234" }, "NA", `"9026001234" no es un número de CAE de 11 dígitos`},
		{"CAE number of 12 digits", func(r *CAERange) { r.CAEID = "902600123456" }, "NA", "de 11 dígitos"},
		{"CAE number with a letter", func(r *CAERange) { r.CAEID = "9026A012345" }, "NA", "de 11 dígitos"},
		{"no authorization date", func(r *CAERange) { r.Autorizado = Date{} }, "FA", "obligatoria"},
		{"no expiry date", func(r *CAERange) { r.Vencimiento = Date{} }, "FVD", "obligatoria"},
		{"expires before it is authorized", func(r *CAERange) { r.Vencimiento = r.Autorizado.AddDays(-1) }, "FVD",
			"vence (2026-01-04) antes de su autorización (2026-01-05)"},
		{"unknown special kind", func(r *CAERange) { r.CAEEspecial = 5 }, "CAEEspecial", "5 no es 1 (exonerado)"},
		{"negative special kind", func(r *CAERange) { r.CAEEspecial = -1 }, "CAEEspecial", "-1 no es 1"},
		{"exonerated without reason", func(r *CAERange) { r.CAEEspecial = 1 }, "CausalCAEEsp", "obligatoria"},
		{"reason without exoneration", func(r *CAERange) { r.CAEEspecial, r.CausalCAEEsp = 2, 5 }, "CausalCAEEsp", "solo corresponde"},
		{"reason on an ordinary CAE", func(r *CAERange) { r.CausalCAEEsp = 5 }, "CausalCAEEsp", "solo corresponde"},
		{"reason of 4 digits", func(r *CAERange) { r.CAEEspecial, r.CausalCAEEsp = 1, 1000 }, "CausalCAEEsp", "1000 no es una causal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := validRange()
			tt.edit(&r)
			err := r.Validate()
			if tt.campo == "" {
				if err != nil {
					t.Fatalf("rejected a valid range: %v", err)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) || e.Code != EINVALID {
				t.Fatalf("want an EINVALID *Error, got %v", err)
			}
			// Each case breaks exactly one rule, and the message names it.
			if len(e.Fields) != 1 {
				t.Fatalf("want one field error on %s, got:\n%s", tt.campo, describeFields(e.Fields))
			}
			wantField(t, err, tt.campo, tt.message)
			if want := "el rango CAE no es válido: " + tt.campo + ": " + e.Fields[0].Mensaje; e.Message != want {
				t.Errorf("message %q, want %q", e.Message, want)
			}
		})
	}
}

// A range with nothing filled in breaks every rule on a required field at
// once: all are reported, not only the first.
func TestCAERange_Validate_ReportsEveryRule(t *testing.T) {
	t.Parallel()
	err := CAERange{}.Validate()
	var campos []string
	for _, f := range ErrorFields(err) {
		campos = append(campos, f.Campo)
	}
	want := []string{"RucE", "TCFE", "Serie", "DNro", "HNro", "NA", "FA", "FVD"}
	if !slices.Equal(campos, want) {
		t.Errorf("fields %v, want %v", campos, want)
	}
	if ErrorMessage(err) != "el rango CAE no es válido" {
		t.Errorf("message %q", ErrorMessage(err))
	}
}
