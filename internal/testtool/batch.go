package testtool

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
)

// batchSize is how many files one xmllint or xmlsec1 call takes.
const batchSize = 400

// writeDocs writes docs into a new temporary folder and returns the files in
// the order of their names.
func writeDocs(t testing.TB, docs map[string][]byte, fix func([]byte) []byte) []string {
	t.Helper()
	dir := t.TempDir()
	names := make([]string, 0, len(docs))
	for name := range docs {
		names = append(names, name)
	}
	slices.Sort(names)
	files := make([]string, len(names))
	for i, name := range names {
		if strings.ContainsAny(name, `/\`) {
			t.Fatalf("document name %q is not a file name", name)
		}
		files[i] = filepath.Join(dir, name)
		doc := docs[name]
		if fix != nil {
			doc = fix(doc)
		}
		if err := os.WriteFile(files[i], doc, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return files
}

// ValidateXSDBatch validates many documents against the schema xsd with a
// few xmllint calls, and returns xmllint's messages for each document that
// does not validate, by name (empty when all do). Names must be file names.
// As ValidateXSD, it shortens X509SerialNumber values libxml2 cannot read.
// The calls run side by side, as many at a time as there are CPUs.
func ValidateXSDBatch(t testing.TB, xsd string, docs map[string][]byte) map[string]string {
	t.Helper()
	bin := Require(t, "xmllint")
	files := writeDocs(t, docs, func(b []byte) []byte { return serialRE.ReplaceAll(b, []byte("${1}1${2}")) })
	return inChunks(files, func(chunk []string, failed map[string]string) {
		args := append([]string{"--noout", "--nonet", "--schema", xsd}, chunk...)
		out, err := exec.Command(bin, args...).CombinedOutput()
		for _, f := range chunk {
			if bytes.Contains(out, []byte(f+" validates")) {
				continue
			}
			var msgs []string
			for _, line := range strings.Split(string(out), "\n") {
				if strings.HasPrefix(line, f) {
					msgs = append(msgs, line)
				}
			}
			if len(msgs) == 0 {
				msgs = append(msgs, fmt.Sprintf("xmllint said nothing about it (%v)", err))
			}
			failed[filepath.Base(f)] = strings.Join(msgs, "\n")
		}
	})
}

// XMLSecVerifyBatch verifies many signed documents with the certificate each
// embeds in KeyInfo (as XMLSecVerify with no certificate), a few xmlsec1
// calls for all of them, and returns xmlsec1's output for each document
// that does not verify, by name (empty when all do). The calls run side by
// side, as many at a time as there are CPUs.
func XMLSecVerifyBatch(t testing.TB, docs map[string][]byte) map[string]string {
	t.Helper()
	bin := Require(t, "xmlsec1")
	files := writeDocs(t, docs, nil)
	return inChunks(files, func(chunk []string, failed map[string]string) {
		args := append([]string{"--verify", "--enabled-key-data", "x509", "--insecure"}, chunk...)
		out, err := exec.Command(bin, args...).CombinedOutput()
		if err == nil && bytes.Count(out, []byte("\nOK\n"))+boolInt(bytes.HasPrefix(out, []byte("OK\n"))) == len(chunk) &&
			!bytes.Contains(out, []byte("FAIL")) {
			return
		}
		// Something failed: find which, one file at a time.
		for _, f := range chunk {
			out, err := exec.Command(bin, "--verify", "--enabled-key-data", "x509", "--insecure", f).CombinedOutput()
			if err != nil || !bytes.Contains(out, []byte("OK")) {
				failed[filepath.Base(f)] = string(out)
			}
		}
	})
}

// inChunks runs check on files batchSize at a time, up to GOMAXPROCS chunks
// at once, and merges what each chunk's check put in its own failed map.
// check runs on other goroutines: it must not call t's methods.
func inChunks(files []string, check func(chunk []string, failed map[string]string)) map[string]string {
	var (
		mu     sync.Mutex
		wg     sync.WaitGroup
		failed = map[string]string{}
		slots  = make(chan struct{}, runtime.GOMAXPROCS(0))
	)
	for start := 0; start < len(files); start += batchSize {
		chunk := files[start:min(start+batchSize, len(files))]
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			own := map[string]string{}
			check(chunk, own)
			mu.Lock()
			maps.Copy(failed, own)
			mu.Unlock()
		})
	}
	wg.Wait()
	return failed
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
