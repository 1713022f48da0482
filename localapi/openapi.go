package localapi

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"strings"
	"sync"

	"github.com/gorilla/mux"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// OpenAPI is the OpenAPI 3.1 description of the local module: its routes,
// every field of the signing request (with the names production clients of
// the hosted service send, and those accepted and ignored), the answers and
// the error shapes. It is the one source of the API reference: GET
// /openapi.json serves it as it is, GET /docs renders it, and tests check it
// against cfe.DecodeRequest's accepted fields and validate every example
// request against it.
//
// Extensions: "x-cfe-alias-de" names the field a property is another name
// of; "x-cfe-ignorado" marks a name accepted and ignored.
//
//go:embed openapi.json
var OpenAPI []byte

//go:embed docs.css
var docsCSS string

// docsCSP allows the reference page its one inline style sheet and nothing
// else: no script, no image, no request.
var docsCSP = "default-src 'none'; style-src '" + sha256Source(docsCSS) +
	"'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

func sha256Source(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "sha256-" + base64.StdEncoding.EncodeToString(sum[:])
}

func (s *Server) registerDocsRoutes(r *mux.Router) {
	s.handle(r, http.MethodGet, "/openapi.json", s.handleOpenAPI) // openapi_served.go
	s.handle(r, http.MethodGet, "/docs", s.handleDocs)
}

func (s *Server) handleDocs(w http.ResponseWriter, r *http.Request) {
	page, err := docsPage()
	if err != nil {
		s.writeError(w, r, &cfe.Error{Code: cfe.EINTERNAL, Op: "localapi.handleDocs", Err: err})
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", docsCSP)
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	_, _ = w.Write(page) // the client may have gone
}

// docsPage renders the reference page from OpenAPI, once, on first use.
var docsPage = sync.OnceValues(func() ([]byte, error) { return renderDocs(OpenAPI) })

// object is a JSON object that keeps its keys in the order written, so that
// the page follows the description's order.
type object []member

type member struct {
	Key   string
	Value json.RawMessage
}

func (o *object) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return fmt.Errorf("want a JSON object: %w", err)
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return err
		}
		*o = append(*o, member{Key: t.(string), Value: v})
	}
	return nil
}

// spec is the part of an OpenAPI document the page shows.
type spec struct {
	Info struct {
		Title       string `json:"title"`
		Version     string `json:"version"`
		Description string `json:"description"`
	} `json:"info"`
	Servers []struct {
		URL string `json:"url"`
	} `json:"servers"`
	Paths      object `json:"paths"`
	Components struct {
		Schemas object `json:"schemas"`
	} `json:"components"`
}

type operation struct {
	Summary     string `json:"summary"`
	Description string `json:"description"`
	RequestBody *struct {
		Content object `json:"content"`
	} `json:"requestBody"`
	Responses object `json:"responses"`
}

type response struct {
	Description string `json:"description"`
	Headers     object `json:"headers"`
	Content     object `json:"content"`
}

type mediaType struct {
	Schema  schema          `json:"schema"`
	Example json.RawMessage `json:"example"`
}

type schema struct {
	Ref         string          `json:"$ref"`
	Type        json.RawMessage `json:"type"`
	Format      string          `json:"format"`
	Description string          `json:"description"`
	Enum        []any           `json:"enum"`
	Items       *schema         `json:"items"`
	Properties  object          `json:"properties"`
	Required    []string        `json:"required"`
	AllOf       []schema        `json:"allOf"`
	AliasOf     string          `json:"x-cfe-alias-de"`
	Ignored     bool            `json:"x-cfe-ignorado"`
	Minimum     *float64        `json:"minimum"`
	Maximum     *float64        `json:"maximum"`
}

// Page model.
type (
	docsData struct {
		Title, Version, Description, Server string
		CSS                                 template.CSS
		Endpoints                           []endpointDoc
		Schemas                             []schemaDoc
	}
	endpointDoc struct {
		ID, Method, Path, Summary, Description string
		Body                                   typeDoc
		Example                                string
		Responses                              []responseDoc
	}
	responseDoc struct {
		Status, Description string
		Types               []mediaDoc
		Headers             []fieldDoc
	}
	mediaDoc struct {
		Media string
		Type  typeDoc
	}
	schemaDoc struct {
		Name, Description string
		Type              typeDoc
		Extends           []typeDoc
		Fields            []fieldDoc
	}
	fieldDoc struct {
		Name, Description string
		Type              typeDoc
		Required          bool
		AliasOf           string
		Ignored           bool
		Depth             int
	}
	// typeDoc is a type as the page writes it: a link to a schema, or a
	// plain type, maybe a list of either.
	typeDoc struct {
		Text, Link string // Link is the schema's name when Text names one
		List       bool
	}
)

var errSpec = errors.New("invalid OpenAPI description")

// renderDocs renders the reference page of an OpenAPI document.
func renderDocs(raw []byte) ([]byte, error) {
	var sp spec
	if err := json.Unmarshal(raw, &sp); err != nil {
		return nil, fmt.Errorf("%w: %w", errSpec, err)
	}
	d := docsData{Title: sp.Info.Title, Version: sp.Info.Version, Description: sp.Info.Description, CSS: template.CSS(docsCSS)}
	if len(sp.Servers) > 0 {
		d.Server = sp.Servers[0].URL
	}
	for _, p := range sp.Paths {
		var ops object
		if err := json.Unmarshal(p.Value, &ops); err != nil {
			return nil, fmt.Errorf("%w: path %s: %w", errSpec, p.Key, err)
		}
		for _, o := range ops {
			ep, err := endpointDocOf(p.Key, o)
			if err != nil {
				return nil, err
			}
			d.Endpoints = append(d.Endpoints, ep)
		}
	}
	for _, m := range sp.Components.Schemas {
		var sc schema
		if err := json.Unmarshal(m.Value, &sc); err != nil {
			return nil, fmt.Errorf("%w: schema %s: %w", errSpec, m.Key, err)
		}
		sd := schemaDoc{Name: m.Key, Description: sc.Description, Type: typeOf(sc)}
		fields, err := fieldDocs(sc, 0)
		if err != nil {
			return nil, fmt.Errorf("%w: schema %s: %w", errSpec, m.Key, err)
		}
		sd.Fields = fields
		for _, part := range sc.AllOf {
			if part.Ref != "" {
				sd.Extends = append(sd.Extends, typeOf(part))
				continue
			}
			more, err := fieldDocs(part, 0)
			if err != nil {
				return nil, fmt.Errorf("%w: schema %s: %w", errSpec, m.Key, err)
			}
			sd.Fields = append(sd.Fields, more...)
		}
		d.Schemas = append(d.Schemas, sd)
	}
	var buf bytes.Buffer
	if err := docsTemplate.Execute(&buf, d); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func endpointDocOf(path string, o member) (endpointDoc, error) {
	var op operation
	if err := json.Unmarshal(o.Value, &op); err != nil {
		return endpointDoc{}, fmt.Errorf("%w: %s %s: %w", errSpec, o.Key, path, err)
	}
	method := strings.ToUpper(o.Key)
	ep := endpointDoc{ID: anchor(method + path), Method: method, Path: path, Summary: op.Summary, Description: op.Description}
	if op.RequestBody != nil {
		for _, c := range op.RequestBody.Content {
			var mt mediaType
			if err := json.Unmarshal(c.Value, &mt); err != nil {
				return endpointDoc{}, fmt.Errorf("%w: %s %s body: %w", errSpec, method, path, err)
			}
			ep.Body = typeOf(mt.Schema)
			if len(mt.Example) > 0 {
				var pretty bytes.Buffer
				if err := json.Indent(&pretty, mt.Example, "", "  "); err == nil {
					ep.Example = pretty.String()
				}
			}
		}
	}
	for _, r := range op.Responses {
		var resp response
		if err := json.Unmarshal(r.Value, &resp); err != nil {
			return endpointDoc{}, fmt.Errorf("%w: %s %s %s: %w", errSpec, method, path, r.Key, err)
		}
		rd := responseDoc{Status: r.Key, Description: resp.Description}
		for _, c := range resp.Content {
			var mt mediaType
			if err := json.Unmarshal(c.Value, &mt); err != nil {
				return endpointDoc{}, fmt.Errorf("%w: %s %s %s: %w", errSpec, method, path, r.Key, err)
			}
			rd.Types = append(rd.Types, mediaDoc{Media: c.Key, Type: typeOf(mt.Schema)})
		}
		for _, h := range resp.Headers {
			var hd struct {
				Description string `json:"description"`
				Schema      schema `json:"schema"`
			}
			if err := json.Unmarshal(h.Value, &hd); err != nil {
				return endpointDoc{}, fmt.Errorf("%w: %s %s header %s: %w", errSpec, method, path, h.Key, err)
			}
			rd.Headers = append(rd.Headers, fieldDoc{Name: h.Key, Description: hd.Description, Type: typeOf(hd.Schema)})
		}
		ep.Responses = append(ep.Responses, rd)
	}
	return ep, nil
}

// fieldDocs lists the properties of sc; inline objects' own properties
// follow theirs, one level deeper.
func fieldDocs(sc schema, depth int) ([]fieldDoc, error) {
	var out []fieldDoc
	for _, p := range sc.Properties {
		var ps schema
		if err := json.Unmarshal(p.Value, &ps); err != nil {
			return nil, fmt.Errorf("property %s: %w", p.Key, err)
		}
		out = append(out, fieldDoc{Name: p.Key, Description: ps.Description, Type: typeOf(ps),
			Required: contains(sc.Required, p.Key), AliasOf: ps.AliasOf, Ignored: ps.Ignored, Depth: depth})
		inner := ps
		if ps.Items != nil && ps.Items.Ref == "" {
			inner = *ps.Items
		}
		if inner.Ref == "" && len(inner.Properties) > 0 {
			sub, err := fieldDocs(inner, depth+1)
			if err != nil {
				return nil, fmt.Errorf("property %s: %w", p.Key, err)
			}
			out = append(out, sub...)
		}
	}
	return out, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// typeOf writes a schema's type: the schema it refers to, or its JSON
// type(s) and format, with enumerated values and bounds.
func typeOf(sc schema) typeDoc {
	if sc.Ref != "" {
		name := sc.Ref[strings.LastIndex(sc.Ref, "/")+1:]
		return typeDoc{Text: name, Link: name}
	}
	if sc.Items != nil {
		t := typeOf(*sc.Items)
		t.List = true
		return t
	}
	var types []string
	if len(sc.Type) > 0 {
		var one string
		if json.Unmarshal(sc.Type, &one) == nil {
			types = []string{one}
		} else {
			_ = json.Unmarshal(sc.Type, &types) // an unreadable type is shown as "cualquiera"
		}
	}
	text := strings.Join(types, " | ")
	if text == "" {
		text = "cualquiera"
	}
	if sc.Format != "" {
		text += " (" + sc.Format + ")"
	}
	if len(sc.Enum) > 0 {
		vals := make([]string, len(sc.Enum))
		for i, v := range sc.Enum {
			vals[i] = fmt.Sprint(v)
		}
		text += ": " + strings.Join(vals, ", ")
	}
	if sc.Minimum != nil && sc.Maximum != nil {
		text += fmt.Sprintf(" %g–%g", *sc.Minimum, *sc.Maximum)
	}
	return typeDoc{Text: text}
}

// anchor turns "POST/sign-cfe" into an HTML id, "post-sign-cfe".
func anchor(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if 'a' <= r && r <= 'z' || '0' <= r && r <= '9' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
		} else {
			dash = true
		}
	}
	return b.String()
}

//go:embed docs.html
var docsHTML string

var docsTemplate = template.Must(template.New("docs").Funcs(template.FuncMap{"lower": strings.ToLower}).Parse(docsHTML))
