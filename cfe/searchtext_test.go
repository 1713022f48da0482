package cfe_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// TestReadSearchText_DGISamples: on every CFE of DGI's samples, the
// streaming reader finds the same receiver, document, line names and
// currency as the full parse (ParseXML), and at least one sample has each.
func TestReadSearchText_DGISamples(t *testing.T) {
	t.Parallel()
	var receivers, items int
	for _, f := range dgiSamples(t) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		got, err := cfe.ReadSearchText(b)
		if err != nil {
			t.Fatalf("%s: %v", filepath.Base(f), err)
		}
		c, err := cfe.ParseXML(b)
		if err != nil {
			t.Fatalf("%s: %v", filepath.Base(f), err)
		}
		var want cfe.SearchText
		if r := c.Receptor; r != nil {
			want.Receiver = r.RznSocRecep
			want.Document = r.DocRecep + r.DocRecepExt
		}
		for _, it := range c.Items {
			if it.NomItem != "" { // an e-Resguardo's lines have none
				want.Items = append(want.Items, it.NomItem)
			}
		}
		want.Currency = c.Totales.Currency()
		if got.Receiver != want.Receiver || got.Document != want.Document || got.Currency != want.Currency || !slices.Equal(got.Items, want.Items) {
			t.Errorf("%s: read %+v, the model says %+v", filepath.Base(f), got, want)
		}
		if of := cfe.SearchTextOf(c); of.Receiver != got.Receiver || of.Document != got.Document ||
			of.Currency != got.Currency || !slices.Equal(of.Items, got.Items) {
			t.Errorf("%s: SearchTextOf %+v, read from the XML %+v", filepath.Base(f), of, got)
		}
		if got.Receiver != "" {
			receivers++
		}
		items += len(got.Items)
	}
	if receivers == 0 || items == 0 {
		t.Fatalf("the samples gave %d receivers and %d lines: the test proves nothing", receivers, items)
	}
	if _, err := cfe.ReadSearchText([]byte("<CFE><eTck>")); cfe.ErrorCode(err) != cfe.EINVALID {
		t.Fatalf("a cut document: %v, want EINVALID", err)
	}
}
