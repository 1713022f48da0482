package issuing

import (
	"testing"
	"time"
)

// TestPreviewStore_companyShare: one company making many previews evicts
// only its own oldest, never another company's before it expires.
func TestPreviewStore_companyShare(t *testing.T) {
	t.Parallel()
	var ps previewStore
	now := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	other, _ := ps.put(2, []byte("otra"), now)
	var own []string
	for i := range maxCompanyPreviews + 8 {
		tok, _ := ps.put(1, []byte("propia"), now.Add(time.Duration(i+1)*time.Second))
		own = append(own, tok)
	}
	if _, ok := ps.get(other, now.Add(time.Minute)); !ok {
		t.Fatal("another company's preview was evicted by company 1's")
	}
	kept := 0
	for i, tok := range own {
		_, ok := ps.get(tok, now.Add(time.Minute))
		if ok {
			kept++
		}
		if oldest := i < 8; ok == oldest {
			t.Errorf("preview %d of company 1 kept=%v", i, ok)
		}
	}
	if kept != maxCompanyPreviews {
		t.Errorf("company 1 keeps %d previews, want %d", kept, maxCompanyPreviews)
	}
	if _, ok := ps.get(other, now.Add(previewTTL)); ok {
		t.Error("an expired preview is still served")
	}
}
