package escpos

import (
	"bytes"
	"testing"
)

// FuzzRender_Text feeds the text a point of sale controls (the adenda, a
// line's description) through Render: whatever it holds, the receipt keeps
// exactly one reset and one cut, and no real-time command: text never turns
// into printer commands.
func FuzzRender_Text(f *testing.F) {
	base := receiptOf(f, sample(f, samples[0]))
	for _, s := range []string{"Mesa 4", "\x1b@\x1dVA\x00", "\x10\x04\x01", "ñ\u0000é\x7f►☺", "\r\n\t", "\xff\xfe"} {
		f.Add(s, "cp858")
		f.Add(s, "cp437")
	}
	f.Fuzz(func(t *testing.T, text, page string) {
		if _, ok := codePages[page]; !ok {
			return
		}
		r := *base
		r.Adenda = text
		r.Rows = append(r.Rows[:0:0], r.Rows...)
		r.Rows[0].Cells = append([]string(nil), r.Rows[0].Cells...)
		r.Rows[0].Cells[1] = text
		b, err := Render(&r, Options{CodePage: page, Cut: CutFull})
		if err != nil {
			t.Fatal(err)
		}
		if hasRealTime(b) {
			t.Fatalf("a real-time command in the receipt of %q", text)
		}
		if n := bytes.Count(b, []byte{esc, '@'}); n != 1 {
			t.Fatalf("%d resets in the receipt of %q", n, text)
		}
		if n := bytes.Count(b, []byte{gs, 'V'}); n != 1 {
			t.Fatalf("%d cuts in the receipt of %q", n, text)
		}
	})
}
