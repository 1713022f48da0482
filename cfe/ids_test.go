package cfe

import "testing"

// DGITypes.xsd SerieType: length 1 or 2 and one of the patterns [A-Z],
// [A-Z][A-Z], [1-9][A-Z] (XSD patterns match the whole value).
func TestValidSerie(t *testing.T) {
	t.Parallel()
	tests := []struct {
		serie string
		want  bool
	}{
		{"A", true}, {"Z", true}, {"AB", true}, {"ZZ", true}, {"1A", true}, {"9Z", true},
		{"", false},
		{"a", false}, {"Ab", false}, {"aB", false}, // capitals only
		{"Ñ", false}, {"AÑ", false}, // Ñ is not in A-Z (and is two bytes)
		{"0A", false},                              // the digit is 1-9
		{"A1", false}, {"1", false}, {"11", false}, // a letter always ends it
		{"ABC", false}, {"1AB", false}, {" A", false}, {"A ", false},
	}
	for _, tt := range tests {
		if got := ValidSerie(tt.serie); got != tt.want {
			t.Errorf("ValidSerie(%q) = %v, want %v", tt.serie, got, tt.want)
		}
	}
}

// Check digits worked out by hand with weights 4,3,2,9,8,7,6,5,4,3,2 and
// check = (11 − Σ mod 11) mod 11:
//   - 219999830019 (DGI's test RUC): Σ = 8+3+18+81+72+63+48+15+0+0+2 = 310,
//     310 mod 11 = 2, check 9.
//   - 214844360018 (DGI's RUC): Σ = 8+3+8+72+32+28+18+30+0+0+2 = 201,
//     201 mod 11 = 3, check 8.
//   - 21999983002x: Σ = 312, 312 mod 11 = 4, check 7.
//   - 23999983001x: Σ = 316, 316 mod 11 = 8, check 3.
//   - 00123456001x: Σ = 0+0+2+18+24+28+30+30+0+0+2 = 134, 134 mod 11 = 2, check 9.
//   - 21000000001x: Σ = 8+3+2 = 13, 13 mod 11 = 2, check 9.
//   - 50000000000x: Σ = 20, 20 mod 11 = 9, check 2.
//   - 21100006001x: Σ = 8+3+2+30+2 = 45, 45 mod 11 = 1, check 10: no last digit is valid.
//   - 30000000000x: Σ = 12, 12 mod 11 = 1, check 10: no last digit is valid.
func TestValidRUC(t *testing.T) {
	t.Parallel()
	tests := []struct {
		ruc  string
		want bool
	}{
		{"219999830019", true},  // DGI's test RUC, used in all DGI examples
		{"214844360018", true},  // DGI's own RUC (RutReceptor of every sobre)
		{"219999830018", false}, // check digit altered
		{"219999830010", false},
		{"214844360019", false},
		{"219999831019", false}, // a number digit altered
		{"219999830029", false}, // digits 9-11 altered: the check would be 7
		{"239999830019", false}, // digits 1-2 altered: the check would be 3
		// DGI checks the digits and the check digit only: no structure
		// beyond them (digits 1-2, 3-8, 9-11) is required.
		{"001234560019", true},
		{"210000000019", true},
		{"500000000002", true},
		{"210000000011", false},
		{"500000000003", false},
		// Σ mod 11 = 1 for 21100006001 (Σ = 45) and 30000000000 (Σ = 12):
		// the check would be 10, so no last digit is valid.
		{"211000060010", false}, {"211000060011", false}, {"211000060019", false},
		{"300000000000", false}, {"300000000001", false},
		{"21999983001", false},   // 11 digits
		{"2199998300190", false}, // 13 digits
		{"21999983001A", false},
		{"21.999983.001.9", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := ValidRUC(tt.ruc); got != tt.want {
			t.Errorf("ValidRUC(%q) = %v, want %v", tt.ruc, got, tt.want)
		}
	}
}

// Expected check digits were worked out with the alternative formulation
// of the same rule (weights 8,1,2,3,4,7,6 and the sum mod 10):
// 1234567 → 148 with 2,9,8,7,6,3,4 → (10−8) mod 10 = 2; with 8,1,2,3,4,7,6 → 132 mod 10 = 2.
func TestValidCI(t *testing.T) {
	t.Parallel()
	tests := []struct {
		ci   string
		want bool
	}{
		{"12345672", true},  // 1.234.567-2
		{"11111111", true},  // 1.111.111-1
		{"47812125", true},  // 4.781.212-5
		{"09876549", true},  // 987.654-9 written with a leading zero
		{"9876549", true},   // the same six-digit number without it
		{"01234561", true},  // 123.456-1
		{"99999999", true},  // 9.999.999-9
		{"30000004", true},  // 3.000.000-4
		{"12345673", false}, // check digit altered
		{"12345670", false},
		{"11111112", false},
		{"1111111", false}, // 111.111-1: the check of 0111111 is 3
		{"13345672", false},
		{"1.234.567-2", false}, // digits only
		{"123456", false},
		{"123456789", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := ValidCI(tt.ci); got != tt.want {
			t.Errorf("ValidCI(%q) = %v, want %v", tt.ci, got, tt.want)
		}
	}
}

// GS1's own examples: 629104150021-3 and 400638133393-1; the others follow
// the same rule (weights 3,1,3,… from the rightmost data digit).
func TestValidGTIN(t *testing.T) {
	t.Parallel()
	tests := []struct {
		code string
		n    int
		want bool
	}{
		{"6291041500213", 13, true},
		{"4006381333931", 13, true},
		{"4006381333932", 13, false},
		{"12345670", 8, true},
		{"12345678", 8, false},
		{"629104150021", 12, false}, // 12 digits whose last is not the check of the first 11
		{"036000291452", 12, true},
		{"10012345678902", 14, true},
		{"10012345678903", 14, false},
		{"6291041500213", 14, false}, // wrong length for the type
		{"629104150021X", 13, false},
	}
	for _, tt := range tests {
		if got := validGTIN(tt.code, tt.n); got != tt.want {
			t.Errorf("validGTIN(%q, %d) = %v, want %v", tt.code, tt.n, got, tt.want)
		}
	}
}
