// Package assets holds the files compiled into the agent's binary. It is a
// leaf package: it imports nothing of the project.
//
// It owns:
//   - the fonts of the printed representation: Go's fonts (Bigelow &
//     Holmes, BSD-licensed, shipped by golang.org/x/image/font/gofont),
//     which cover the Latin-1 and Latin Extended-A letters Spanish needs
//     (á, é, ñ, º, ...), so that text extracts correctly from the PDFs and no
//     system font is needed on any platform;
//   - DGI's XSDs, for validating documents (cfe/xsdvalid; xmllint in tests and as verify's second opinion);
//   - the public certificates of Uruguay's national root and of accredited
//     certification authorities (roots/, provenance in roots/SOURCE.md), for
//     checking who signed a CFE.
package assets
