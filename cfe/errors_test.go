package cfe

import (
	"fmt"
	"testing"
)

func TestListedFields(t *testing.T) {
	t.Parallel()
	many := func(n int) []FieldError {
		out := make([]FieldError, n)
		for i := range out {
			out[i] = FieldError{Campo: fmt.Sprintf("cfe.x%d", i), Mensaje: "campo desconocido"}
		}
		return out
	}
	tests := []struct {
		name     string
		err      error
		wantLen  int
		wantLast FieldError
	}{
		{"no error", nil, 0, FieldError{}},
		{"not a cfe.Error", fmt.Errorf("disk"), 0, FieldError{}},
		{"one field", Invalid("op", many(1)...), 1, FieldError{"cfe.x0", "campo desconocido"}},
		{"exactly the cap", Invalid("op", many(MaxListedFields)...), MaxListedFields, FieldError{"cfe.x19", "campo desconocido"}},
		{"one over the cap", Invalid("op", many(MaxListedFields+1)...), MaxListedFields + 1, FieldError{"errores", "y 1 más"}},
		{"60 000", Invalid("op", many(60000)...), MaxListedFields + 1, FieldError{"errores", "y 59980 más"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := ListedFields(tc.err)
			if got == nil {
				t.Fatal("nil list: an error body always lists its fields, maybe none")
			}
			if len(got) != tc.wantLen {
				t.Fatalf("%d fields, want %d", len(got), tc.wantLen)
			}
			if tc.wantLen > 0 && got[len(got)-1] != tc.wantLast {
				t.Errorf("last entry %+v, want %+v", got[len(got)-1], tc.wantLast)
			}
			if tc.wantLen > 1 && got[0].Campo != "cfe.x0" {
				t.Errorf("first entry %+v, want the first field in order", got[0])
			}
		})
	}
	// The error itself keeps every field.
	err := Invalid("op", many(30)...)
	ListedFields(err)
	if len(err.Fields) != 30 {
		t.Errorf("ListedFields changed the error: %d fields left", len(err.Fields))
	}
}
