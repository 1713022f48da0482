package dgi

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// checkEnvelopeRequest refuses an empty list of ids (it names no CFE) for
// both envelopes, before anything is read or numbered; an absent or null
// "ids" is the filter's request.
func TestCheckEnvelopeRequest_ids(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		body string
		kind cfe.EnvelopeKind
		want string // the field named, "" when accepted
	}{
		{`{"ids": []}`, cfe.EnvelopeDGI, "ids"},
		{`{"ids": [], "idEmpresa": 1}`, cfe.EnvelopeDGI, "ids"},
		{`{"ids": [], "rucReceptor": "214844360018"}`, cfe.EnvelopeReceiver, "ids"},
		{`{}`, cfe.EnvelopeDGI, ""},
		{`{"ids": null}`, cfe.EnvelopeDGI, ""},
		{`{"ids": [7]}`, cfe.EnvelopeDGI, ""},
		{`{"tipoFiltro": 101}`, cfe.EnvelopeDGI, ""},
	} {
		var req EnvelopeRequest
		if err := json.Unmarshal([]byte(c.body), &req); err != nil {
			t.Fatal(err)
		}
		err := checkEnvelopeRequest(c.kind, &req)
		fields := cfe.ListedFields(err)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: refused (%v)", c.body, err)
		case c.want != "" && (cfe.ErrorCode(err) != cfe.EINVALID || len(fields) != 1 || fields[0].Campo != c.want ||
			!strings.Contains(fields[0].Mensaje, "al menos un CFE")):
			t.Errorf("%s: %v (fields %+v), want EINVALID naming %s", c.body, err, fields, c.want)
		}
	}
}
