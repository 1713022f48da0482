package cfe

// The identifiers a CFE carries and their rules: the series and number (DGI's
// SerieType and NroCFEType) and the check digits of the RUC (tax number), the
// Uruguayan cédula de identidad (C.I.) and GS1 item codes (GTIN).

// MaxNro is the largest CFE number (NroCFEType: an integer of at most 7
// digits, from 1). A CAE range, and so every number, lies within 1..MaxNro.
const MaxNro = 9_999_999

// ValidSerie reports whether s is a series DGI admits (SerieType, DGITypes.xsd):
// one letter, two letters, or a digit 1-9 followed by a letter, letters being
// the capitals A to Z (no Ñ).
func ValidSerie(s string) bool {
	switch len(s) {
	case 1:
		return isCapital(s[0])
	case 2:
		return (isCapital(s[0]) || '1' <= s[0] && s[0] <= '9') && isCapital(s[1])
	}
	return false
}

func isCapital(b byte) bool { return 'A' <= b && b <= 'Z' }

// ValidRUC reports whether s is a Uruguayan RUC as DGI checks it: 12 digits
// (NUM 12) with a correct check digit (V24 A-C40 and A-C62: "dígito verificador").
// The check digit is (−Σ dᵢ·wᵢ) mod 11 over the first 11 digits with weights
// 4,3,2,9,8,7,6,5,4,3,2; a result of 10 makes the number invalid
// (dgi-cfe-format.md §10). The further structure some libraries require
// (digits 1-2 in 01..22, digits 9-11 "001") is not in DGI's texts, and a RUC
// DGI accepts must not be refused here, so it is not checked.
func ValidRUC(s string) bool {
	if len(s) != 12 || !allDigits(s) {
		return false
	}
	weights := [11]int{4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2}
	sum := 0
	for i, w := range weights {
		sum += int(s[i]-'0') * w
	}
	check := (11 - sum%11) % 11
	return check != 10 && check == int(s[11]-'0')
}

// ValidCI reports whether s is a Uruguayan C.I. written as digits only: 7 or 8
// digits, the last one the check digit. Numbers of six digits plus check digit
// are read with a leading zero. The check digit is (10 − Σ dᵢ·wᵢ mod 10) mod 10
// with weights 2,9,8,7,6,3,4 over the seven number digits.
func ValidCI(s string) bool {
	if (len(s) != 7 && len(s) != 8) || !allDigits(s) {
		return false
	}
	if len(s) == 7 {
		s = "0" + s
	}
	weights := [7]int{2, 9, 8, 7, 6, 3, 4}
	sum := 0
	for i, w := range weights {
		sum += int(s[i]-'0') * w
	}
	return (10-sum%10)%10 == int(s[7]-'0')
}

// gtinLengths maps the GTIN item-code types DGI accepts (V24 B-C2) to their length.
var gtinLengths = map[string]int{"GTIN8": 8, "GTIN12": 12, "GTIN13": 13, "GTIN14": 14}

// validGTIN reports whether code is a GS1 GTIN of the given length with a
// correct check digit: from the rightmost data digit leftwards the weights
// alternate 3,1,3,…; the check digit brings the sum to a multiple of 10
// (the GS1 rule DGI refers to in CalculoDigitoVerificadorDeCodigosGTIN).
func validGTIN(code string, length int) bool {
	if len(code) != length || !allDigits(code) {
		return false
	}
	sum := 0
	for i := len(code) - 2; i >= 0; i-- {
		w := 1
		if (len(code)-2-i)%2 == 0 {
			w = 3
		}
		sum += int(code[i]-'0') * w
	}
	return (10-sum%10)%10 == int(code[len(code)-1]-'0')
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// digitsValue returns the value of a short all-digit string.
func digitsValue(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		n = n*10 + int(s[i]-'0')
	}
	return n
}
