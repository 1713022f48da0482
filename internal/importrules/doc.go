// Package importrules holds only a test: the project's dependency rules of
// docs/ARCHITECTURE.md, checked against what `go list` says each package
// imports, so that a new import across the rules fails CI instead of waiting
// for a review to notice.
package importrules
