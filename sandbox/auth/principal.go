package auth

import (
	"context"
	"net/http"
	"strconv"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/sandbox/data"
	"github.com/cfe-agent/cfe-agent/sandbox/web"
)

// Principal is the authenticated caller: a user holding a JWT (User and
// Session), or a company API key (Key).
type Principal struct {
	User    *data.User   // JWT
	Session string       // JWT
	Key     *data.APIKey // API key
}

type principalKey struct{}

// PrincipalOf returns the caller of an authenticated request.
func PrincipalOf(r *http.Request) *Principal {
	p, _ := r.Context().Value(principalKey{}).(*Principal)
	return p
}

// withPrincipal returns r carrying p, once Guard authenticated it.
func withPrincipal(r *http.Request, p *Principal) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), principalKey{}, p))
}

// ErrOtherCompany answers a company the caller cannot act for.
var ErrOtherCompany = &cfe.Error{Code: cfe.EFORBIDDEN, Message: "no tiene acceso a la empresa indicada"}

// Company resolves the company a request acts for (interface §5.2 rule 3):
// a key's own company, which a sent idEmpresa must equal (else 403); for a
// JWT the sent idEmpresa, which must be one of the user's companies (403),
// or the user's only company when none is sent (400 when ambiguous).
// idEmpresa 0 is "not sent": real callers send it so when they have no
// company configured (the vendor's PHP SDK does).
func (p *Principal) Company(sent string) (int64, error) {
	var id int64
	if sent != "" {
		n, err := strconv.ParseInt(sent, 10, 64)
		if err != nil || n < 0 {
			return 0, web.Invalid(cfe.FieldError{Campo: "idEmpresa", Mensaje: "debe ser un número mayor que cero"})
		}
		id = n
	}
	switch {
	case p.Key != nil && id != 0 && id != p.Key.Company:
		return 0, ErrOtherCompany
	case p.Key != nil:
		return p.Key.Company, nil
	case id != 0 && !p.User.BelongsTo(id):
		return 0, ErrOtherCompany
	case id != 0:
		return id, nil
	case len(p.User.Companies) == 1:
		return p.User.Companies[0], nil
	}
	return 0, web.Invalid(cfe.FieldError{Campo: "idEmpresa", Mensaje: "es obligatorio: el usuario tiene más de una empresa (o ninguna)"})
}

// CanSee reports whether the caller may act on company's CFEs.
func (p *Principal) CanSee(company int64) bool {
	if p.Key != nil {
		return p.Key.Company == company
	}
	return p.User.BelongsTo(company)
}
