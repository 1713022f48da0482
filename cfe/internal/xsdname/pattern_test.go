package xsdname

import "testing"

func TestCheckPattern(t *testing.T) {
	t.Parallel()
	for _, p := range []string{"[A-Z]", "[1-9][A-Z]", "[0-9]{12}", `\p{L}+`} {
		if err := CheckPattern(p); err != nil {
			t.Errorf("CheckPattern(%q) = %v, want nil", p, err)
		}
	}
	for _, p := range []string{"^[A-Z]", "[A-Z]$", "a.b", `[a-z-[aeiou]]`, `\d+`, `\w`, `\s`, `\i\c*`, "[A-Z"} {
		if err := CheckPattern(p); err == nil {
			t.Errorf("CheckPattern(%q) = nil, want a refusal", p)
		}
	}
}
