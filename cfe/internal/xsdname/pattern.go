package xsdname

import (
	"fmt"
	"regexp"
)

// unsafePattern finds the constructs whose meaning differs between XSD's
// regular expressions and Go's: anchors (literal in XSD), class subtraction,
// the multi-character escapes that are Unicode-wide in XSD and ASCII in Go,
// XSD's name escapes, and the dot (XSD's excludes \r and \n).
var unsafePattern = regexp.MustCompile(`[\^$.]|-\[|\\[dDwWsSiIcC]`)

// CheckPattern refuses an xs:pattern value that Go's regexp would read
// differently from XSD, or cannot compile as a whole-value match, so that
// neither reader of DGI's schemas checks a pattern with another meaning.
func CheckPattern(p string) error {
	if m := unsafePattern.FindString(p); m != "" {
		return fmt.Errorf("pattern %q uses %q, whose meaning differs between XSD and Go", p, m)
	}
	if _, err := regexp.Compile(`^(?:` + p + `)$`); err != nil {
		return fmt.Errorf("pattern %q: %w", p, err)
	}
	return nil
}
