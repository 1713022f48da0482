package testtool

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// WellFormedBatch parses many documents with xmllint, without a schema, and
// returns xmllint's error messages (parser errors, and the namespace errors
// libxml2 reports but still builds a tree for) for each document that is not
// well-formed XML with namespaces, by name. Names must be file names.
func WellFormedBatch(t testing.TB, docs map[string][]byte) map[string]string {
	t.Helper()
	bin := Require(t, "xmllint")
	files := writeDocs(t, docs, nil)
	failed := map[string]string{}
	for start := 0; start < len(files); start += batchSize {
		chunk := files[start:min(start+batchSize, len(files))]
		args := append([]string{"--noout", "--nonet"}, chunk...)
		// xmllint exits non-zero when a document is not well-formed; its
		// messages say which.
		out, _ := exec.Command(bin, args...).CombinedOutput()
		inChunk := map[string]bool{}
		for _, f := range chunk {
			inChunk[f] = true
		}
		for _, line := range strings.Split(string(out), "\n") {
			f, _, _ := strings.Cut(line, ":")
			if inChunk[f] && strings.Contains(line, " error : ") {
				name := filepath.Base(f)
				failed[name] = strings.TrimSpace(failed[name] + "\n" + line)
			}
		}
	}
	return failed
}
