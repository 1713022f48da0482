package localapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
)

// The served description names this agent's own address in "servers" (the
// effective listen address, and on 0.0.0.0 each address it can be reached
// at), so that a client generated from GET /openapi.json, or a "try it"
// page, calls the agent that served it; the embedded file keeps the
// default address, 127.0.0.1:18787.

// servedDocs caches the served description by the URLs it names: a
// module's address does not change while it is open.
var servedDocs sync.Map // string (URLs joined) → []byte

// MarshalJSON writes the object with its keys in their order.
func (o object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(m.Key)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(m.Value)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// openAPIFor returns the description with servers set to urls, the first
// being the module's base URL; OpenAPI itself when urls is empty.
func openAPIFor(urls []string) ([]byte, error) {
	if len(urls) == 0 {
		return OpenAPI, nil
	}
	key, err := json.Marshal(urls)
	if err != nil {
		return nil, err
	}
	if b, ok := servedDocs.Load(string(key)); ok {
		return b.([]byte), nil
	}
	var doc object
	if err := json.Unmarshal(OpenAPI, &doc); err != nil {
		return nil, err
	}
	type server struct {
		URL         string `json:"url"`
		Description string `json:"description"`
	}
	servers := make([]server, len(urls))
	for i, u := range urls {
		servers[i] = server{URL: u, Description: "Este agente"}
		if len(urls) > 1 {
			servers[i].Description = "Este agente, dirección " + strconv.Itoa(i+1) + " de " + strconv.Itoa(len(urls))
		}
	}
	raw, err := json.Marshal(servers)
	if err != nil {
		return nil, err
	}
	for i := range doc {
		if doc[i].Key == "servers" {
			doc[i].Value = raw
		}
	}
	compact, err := doc.MarshalJSON() // not json.Marshal: it would escape <, > and & in the descriptions
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, compact, "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	servedDocs.Store(string(key), out.Bytes())
	return out.Bytes(), nil
}

// handleOpenAPI serves the description with this module's addresses.
func (s *Server) handleOpenAPI(w http.ResponseWriter, r *http.Request) {
	doc, err := openAPIFor(s.URLs())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(doc)))
	_, _ = w.Write(doc) // the client may have gone
}
