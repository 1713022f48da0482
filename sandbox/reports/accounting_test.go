package reports

import "testing"

// TestSpreadsheetText: free text that a spreadsheet would run as a formula is
// marked as text; other values pass unchanged.
func TestSpreadsheetText(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"=HYPERLINK(\"x\")": "'=HYPERLINK(\"x\")", "+1": "'+1", "-2": "'-2", "@SUM(A1)": "'@SUM(A1)",
		"\tx": "'\tx", "\rx": "'\rx", "AB123456": "AB123456", "211111110015": "211111110015", "": "",
	} {
		if got := spreadsheetText(in); got != want {
			t.Errorf("spreadsheetText(%q) = %q, want %q", in, got, want)
		}
	}
}
