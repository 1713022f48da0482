package cfe

// CAE number (NA, CAE_ID): 11 digits, "90" for an electronic emitter, the
// year's last two digits, a 6-digit sequence and a check digit (CAE
// documentation A-C8; every DGI sample has this shape).
const caeIDDigits = 11

// CAEEspecial is 0 for an ordinary CAE, or 1 (exonerated, the only kind that
// carries a CausalCAEEsp of up to 3 digits), 2 (IVA mínimo), 3 (Monotributo)
// or 4 (Monotributo MIDES) (CAEType.xsd).
const (
	caeExonerado    = 1
	maxCAEEspecial  = 4
	maxCausalCAEEsp = 999
)

// Validate checks the rules every CAE range must meet, wherever it comes from
// (a DGI CAE file, the sandbox, a manual entry): the RUC (RucE) is valid; the
// type (TCFE) is one of DGI's table A, electronic (1xx) or a paper
// contingency form (2xx, CFC: a range of pre-printed forms that are keyed in
// afterwards, never numbered by the agent); the serie is one DGI admits; 1 ≤ DNro ≤ HNro ≤ MaxNro; the CAE number (NA) has
// 11 digits; the authorization (FA) and expiry (FVD) dates are set and FVD is
// not before FA; CAEEspecial is 0 to 4, and CausalCAEEsp is given exactly
// when CAEEspecial is 1 (exonerated).
//
// It does not check what depends on the caller: whose RUC it is, whether the
// range has expired, its ID, or overlaps with other ranges.
//
// Errors: EINVALID (a *Error) with one FieldError per broken rule, named after
// the fields of DGI's CAE file (RucE, TCFE, Serie, DNro, HNro, NA, FA, FVD,
// CAEEspecial, CausalCAEEsp).
func (r CAERange) Validate() error {
	var p problems
	if !ValidRUC(r.RUC) {
		p.add("RucE", "%q no es un RUC válido (12 dígitos con dígito verificador correcto)", r.RUC)
	}
	if !r.Type.Valid() {
		p.add("TCFE", "%d no es un tipo de CFE de DGI (electrónico 1xx o de contingencia 2xx)", int(r.Type))
	}
	if !ValidSerie(r.Serie) {
		p.add("Serie", "%q no es una serie válida: una o dos letras mayúsculas (A a ZZ), o un dígito de 1 a 9 y una letra (1A)", r.Serie)
	}
	dOK, hOK := validNro(r.DNro), validNro(r.HNro)
	if !dOK {
		p.add("DNro", "%d está fuera de 1 a %d", r.DNro, MaxNro)
	}
	if !hOK {
		p.add("HNro", "%d está fuera de 1 a %d", r.HNro, MaxNro)
	}
	if dOK && hOK && r.HNro < r.DNro {
		p.add("HNro", "el rango termina (%d) antes de empezar (%d)", r.HNro, r.DNro)
	}
	if len(r.CAEID) != caeIDDigits || !allDigits(r.CAEID) {
		p.add("NA", "%q no es un número de CAE de %d dígitos", r.CAEID, caeIDDigits)
	}
	if r.Autorizado.IsZero() {
		p.add("FA", "la fecha de autorización es obligatoria")
	}
	switch {
	case r.Vencimiento.IsZero():
		p.add("FVD", "la fecha de vencimiento es obligatoria")
	case !r.Autorizado.IsZero() && r.Vencimiento.Before(r.Autorizado):
		p.add("FVD", "el rango vence (%s) antes de su autorización (%s)", r.Vencimiento, r.Autorizado)
	}
	switch {
	case r.CAEEspecial < 0 || r.CAEEspecial > maxCAEEspecial:
		p.add("CAEEspecial", "%d no es 1 (exonerado), 2 (IVA mínimo), 3 (Monotributo) ni 4 (Monotributo MIDES)", r.CAEEspecial)
	case r.CausalCAEEsp < 0 || r.CausalCAEEsp > maxCausalCAEEsp:
		p.add("CausalCAEEsp", "%d no es una causal de 1 a 3 dígitos", r.CausalCAEEsp)
	case r.CAEEspecial == caeExonerado && r.CausalCAEEsp == 0:
		p.add("CausalCAEEsp", "es obligatoria cuando CAEEspecial es 1 (exonerado)")
	case r.CAEEspecial != caeExonerado && r.CausalCAEEsp != 0:
		p.add("CausalCAEEsp", "solo corresponde cuando CAEEspecial es 1 (exonerado)")
	}
	if len(p) == 0 {
		return nil
	}
	msg := "el rango CAE no es válido"
	if len(p) == 1 {
		msg += ": " + p[0].Campo + ": " + p[0].Mensaje
	}
	return &Error{Code: EINVALID, Op: "cfe.CAERange.Validate", Message: msg, Fields: p}
}

func validNro(n int64) bool { return 1 <= n && n <= MaxNro }
