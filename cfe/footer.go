package cfe

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// The printed footer says about the emitter what its signed CFE does not
// (V24/V25 "Pie del comprobante"): the date it entered the CFE regime or,
// instead, the resolution that incorporated it, and the web site where it
// publishes its e-Tickets. pdf.Footer prints them; the agent's profiles and
// the sandbox's companies keep them, and both check them with CheckFooter.

// resolucionRule is the number and year of a DGI resolution, as the footer
// prints it after "Res." (V24: "Res. XX/año").
var resolucionRule = regexp.MustCompile(`^[1-9][0-9]{0,5}/20[0-9]{2}$`)

// minFechaEmisor is the earliest believable date of entry into the CFE
// regime: an earlier one is a typing mistake (the regime is far younger).
var minFechaEmisor = Date{Year: 2000, Month: time.January, Day: 1}

// maxWebURL is the longest web site address accepted, in characters.
const maxWebURL = 120

// CheckFooter returns the rules that an emitter's footer data breaks, each
// field named fechaEmisor, resolucion or webUrl. A zero fechaEmisor and empty
// texts are not set: the footer then prints neither the date nor a
// resolution, and e-Tickets send to www.dgi.gub.uy. At most one of
// fechaEmisor and resolucion may be set (an emitter incorporated by a
// resolution prints only the resolution); webURL must be an http or https
// address.
func CheckFooter(fechaEmisor Date, resolucion, webURL string) []FieldError {
	var fields []FieldError
	fail := func(campo, format string, args ...any) {
		fields = append(fields, FieldError{Campo: campo, Mensaje: fmt.Sprintf(format, args...)})
	}
	if !fechaEmisor.IsZero() && fechaEmisor.Before(minFechaEmisor) {
		fail("fechaEmisor", "la fecha de ingreso al régimen de CFE no puede ser anterior a %d", minFechaEmisor.Year)
	}
	switch {
	case resolucion == "":
	case !resolucionRule.MatchString(resolucion):
		fail("resolucion", "se espera el número y el año de la resolución de DGI, como 1234/2016 (se imprime «Res. 1234/2016»)")
	case !fechaEmisor.IsZero():
		fail("resolucion", "indique la fecha de emisor o la resolución, no ambas: quien ingresó por resolución imprime solo la resolución")
	}
	if webURL != "" {
		u, err := url.Parse(webURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" || u.User != nil ||
			u.Fragment != "" || strings.ContainsFunc(webURL, unicode.IsSpace) || utf8.RuneCountInString(webURL) > maxWebURL {
			fail("webUrl", "se espera la dirección web (http o https, hasta %d caracteres) donde la empresa publica "+
				"sus e-Tickets, como https://www.empresa.com.uy/comprobantes", maxWebURL)
		}
	}
	return fields
}
