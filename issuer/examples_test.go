package issuer_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
)

// TestIssuer_Examples keeps the README's example requests (examples/*.json)
// true: each signs with code 00 and validates against DGI's schema. The
// search text the issuer hands the store from its model (Issued.Search) is
// what the signed XML says (cfe.ReadSearchText).
func TestIssuer_Examples(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join(testtool.RepoRoot(t), "examples", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples found (%v)", err)
	}
	h := newHarness(t)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			res, err := h.iss.Issue(context.Background(), decode(t, string(b)))
			if err != nil {
				t.Fatalf("the example is rejected: %v", err)
			}
			testtool.MustValidateXSD(t, testtool.XSD(t, "CFEDGI.xsd"), res.Issued.XML)
			read, err := cfe.ReadSearchText(res.Issued.XML)
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Issued.Search; got == nil || !reflect.DeepEqual(*got, read) {
				t.Fatalf("Issued.Search = %+v, the signed XML says %+v", got, read)
			}
		})
	}
}
