package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"os"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// A bbolt file cut short (a copy interrupted, a disk full, a truncation)
// still has its two meta pages, which name more pages than the file holds.
// bbolt maps the file into memory and reads those pages without checking
// the file's size, and the process dies with SIGBUS. checkFileSize reads the
// meta pages first (the layout below is bbolt's file format, version 2) and
// refuses such a file with a clear error, so the agent never crash-loops on
// it and never starts a new file silently over it.

const (
	boltMagic      = 0xED0CDAED
	boltVersion    = 2
	boltPageHeader = 16 // page id, flags, count, overflow
	boltMetaSize   = 64 // magic, version, page size, flags, root bucket (2×8), freelist, pgid, txid, checksum
)

// boltMeta is what checkFileSize needs of a meta page.
type boltMeta struct {
	pageSize uint32
	pgid     uint64 // the high-water mark: the file holds pages 0..pgid-1
	txid     uint64
}

// readBoltMeta decodes the meta page at off of f; ok is false when it is not
// a valid meta page (bad magic, version or checksum, or cut off).
func readBoltMeta(f *os.File, off int64) (boltMeta, bool) {
	b := make([]byte, boltMetaSize)
	if _, err := f.ReadAt(b, off+boltPageHeader); err != nil {
		return boltMeta{}, false
	}
	le := binary.NativeEndian // bbolt writes its structures in the machine's order
	h := fnv.New64a()
	_, _ = h.Write(b[:56])
	if le.Uint32(b[0:]) != boltMagic || le.Uint32(b[4:]) != boltVersion || le.Uint64(b[56:]) != h.Sum64() {
		return boltMeta{}, false
	}
	return boltMeta{pageSize: le.Uint32(b[8:]), pgid: le.Uint64(b[40:]), txid: le.Uint64(b[48:])}, true
}

// checkFileSize refuses an existing store file shorter than its own meta
// page says. A missing or empty file passes (bbolt makes a new one), and so
// does a file whose meta pages are unreadable (bbolt reports it).
func checkFileSize(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return nil // bbolt's own open reports it
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() == 0 {
		return nil
	}
	m0, ok0 := readBoltMeta(f, 0)
	size := int64(os.Getpagesize())
	if ok0 {
		size = int64(m0.pageSize)
	}
	m1, ok1 := readBoltMeta(f, size)
	m := m0
	switch {
	case ok1 && (!ok0 || m1.txid > m0.txid):
		m = m1
	case !ok0:
		return nil
	}
	if need := int64(m.pgid) * int64(m.pageSize); fi.Size() < need {
		return &cfe.Error{Code: cfe.EINTERNAL, Op: "store.Open", Err: io.ErrUnexpectedEOF,
			Message: fmt.Sprintf("el archivo de datos %s está truncado (%d bytes; sus datos llegan a %d): no se abre. "+
				"Muévalo a otro lugar y consérvelo (puede contener comprobantes sin enviar); al reiniciar, el agente crea uno nuevo "+
				"y la numeración sigue por encima del diario de numeración", path, fi.Size(), need)}
	}
	return nil
}
