package cfe

import (
	"errors"
	"fmt"
	"testing"
)

// TestDescribe: a terminal shows the user message; several field errors
// each on a line; an internal error whole (it has no user message), also
// wrapped; a single field error is the message itself.
func TestDescribe(t *testing.T) {
	t.Parallel()
	fields := []FieldError{{Campo: "ruc", Mensaje: "dígito verificador incorrecto"}, {Campo: "nombre", Mensaje: "es obligatorio"}}
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"nil", nil, ""},
		{"user message", Errorf(ENOTFOUND, "el perfil %q no existe", "caja"), `el perfil "caja" no existe`},
		{"wrapped user message", fmt.Errorf("CAE x.xml: %w", Errorf(EINVALID, "no lo firmó DGI")), "no lo firmó DGI"},
		{"one field", Invalid("perfil", fields[0]), "ruc: dígito verificador incorrecto"},
		{"several fields", Invalid("perfil", fields...),
			"el comprobante no cumple las reglas de DGI\n  ruc: dígito verificador incorrecto\n  nombre: es obligatorio"},
		{"internal", errors.New("open x: permission denied"), "open x: permission denied"},
		{"internal, wrapped", fmt.Errorf("reading: %w", &Error{Code: EINTERNAL, Err: errors.New("boom")}), "reading: internal: boom"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Describe(tt.err); got != tt.want {
				t.Errorf("Describe = %q, want %q", got, tt.want)
			}
		})
	}
}
