package issuing

import (
	"net/http"
	"strconv"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/sandbox/auth"
	"github.com/cfe-agent/cfe-agent/sandbox/web"
)

// Filter selects a company's issued CFEs: buscar's query once checked.
type Filter struct {
	Company  int64
	Type     cfe.Type // 0: every type
	From, To cfe.Date // signing dates in Montevideo, inclusive; zero: open
}

// ParseSearch reads buscar's query: idEmpresa, tipoFiltro (a CFE type code;
// empty or 0 for all) and fechaFirmaDesde/Hasta (YYYY-MM-DD, both optional,
// inclusive).
func ParseSearch(r *http.Request, p *auth.Principal) (Filter, error) {
	q := r.URL.Query()
	return buildFilter(p, q.Get("idEmpresa"), q.Get("tipoFiltro"), q.Get("fechaFirmaDesde"), q.Get("fechaFirmaHasta"))
}

// CFEFilter is buscar's selection as the JSON body (or part of the body) of
// the POST endpoints that act on many CFEs: the same field names and rules as
// buscar's query parameters.
type CFEFilter struct {
	IdEmpresa       int64  `json:"idEmpresa,omitempty"`
	TipoFiltro      int    `json:"tipoFiltro,omitempty"`
	FechaFirmaDesde string `json:"fechaFirmaDesde,omitempty"`
	FechaFirmaHasta string `json:"fechaFirmaHasta,omitempty"`
}

// Resolve checks the filter's fields and the caller's right to the company,
// with buscar's errors.
func (f CFEFilter) Resolve(p *auth.Principal) (Filter, error) {
	tipo := ""
	if f.TipoFiltro != 0 {
		tipo = strconv.Itoa(f.TipoFiltro)
	}
	return buildFilter(p, web.IDString(f.IdEmpresa), tipo, f.FechaFirmaDesde, f.FechaFirmaHasta)
}

func buildFilter(p *auth.Principal, idEmpresa, tipoFiltro, desde, hasta string) (Filter, error) {
	var f Filter
	var fields []cfe.FieldError
	if t := tipoFiltro; t != "" && t != "0" {
		n, err := strconv.Atoi(t)
		if _, known := cfe.Type(n).Info(); err != nil || !known {
			fields = append(fields, cfe.FieldError{Campo: "tipoFiltro", Mensaje: "debe ser un código de tipo de CFE (101, 111, ...) o 0 para todos"})
		}
		f.Type = cfe.Type(n)
	}
	for _, d := range []struct {
		name, value string
		to          *cfe.Date
	}{{"fechaFirmaDesde", desde, &f.From}, {"fechaFirmaHasta", hasta, &f.To}} {
		if d.value != "" {
			parsed, err := cfe.ParseDate(d.value)
			if err != nil {
				fields = append(fields, cfe.FieldError{Campo: d.name, Mensaje: "debe ser una fecha AAAA-MM-DD"})
			}
			*d.to = parsed
		}
	}
	if !f.From.IsZero() && !f.To.IsZero() && f.To.Before(f.From) {
		fields = append(fields, cfe.FieldError{Campo: "fechaFirmaHasta", Mensaje: "no puede ser anterior a fechaFirmaDesde"})
	}
	if err := web.Invalid(fields...); err != nil {
		return f, err
	}
	var err error
	f.Company, err = p.Company(idEmpresa)
	return f, err
}
