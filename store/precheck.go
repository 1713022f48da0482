package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"os"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

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
	root     uint64 // the root bucket's page
	freelist uint64 // the freelist's page; ^0 when the freelist is not synced
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
	return boltMeta{pageSize: le.Uint32(b[8:]), root: le.Uint64(b[16:]), freelist: le.Uint64(b[32:]),
		pgid: le.Uint64(b[40:]), txid: le.Uint64(b[48:])}, true
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
	m, _, ok := currentMeta(f)
	if !ok {
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

// currentMeta reads bbolt's two meta pages of f and returns the valid one
// with the higher transaction id, and its offset; ok is false when neither
// is valid (bbolt's own open reports that file).
func currentMeta(f *os.File) (m boltMeta, off int64, ok bool) {
	m0, ok0 := readBoltMeta(f, 0)
	size := int64(os.Getpagesize())
	if ok0 {
		size = int64(m0.pageSize)
	}
	m1, ok1 := readBoltMeta(f, size)
	switch {
	case ok1 && (!ok0 || m1.txid > m0.txid):
		return m1, size, true
	case ok0:
		return m0, 0, true
	}
	return boltMeta{}, 0, false
}

// bbolt's page layout (file format version 2), for checkTree.
const (
	boltBranchPage   = 0x01
	boltLeafPage     = 0x02
	boltFreelistPage = 0x10
	boltElemSize     = 16 // branch: pos, ksize, pgid; leaf: flags, pos, ksize, vsize
	boltBucketFlag   = 0x01
	boltBucketHeader = 16 // root page id, sequence
)

// treeChecker walks a bbolt file's page tree from its meta page, reading
// the file with ReadAt, independently of bbolt: every page reached is read
// once and checked to be what its parent says (its own id, a branch or leaf
// page, elements inside the page, a known child), before bbolt maps the
// file and trusts it. bbolt panics on a page of the wrong type, faults on
// an offset outside the file and loops forever on a page that is its own
// ancestor; this finds all three and Open answers a clear error instead.
type treeChecker struct {
	f        *os.File
	pageSize int64
	hwm      uint64   // pages 0..hwm-1 exist
	seen     []bool   // by page id: reached from the tree, or named by the freelist
	bufs     [][]byte // one per depth of the tree: a page's bytes stay while its children are read
	depth    int
	limit    int             // when > 0, pages deeper than limit are not read (checkTop)
	stop     <-chan struct{} // closed: the walk ends with errStopped (the background check at Close)
}

// errStopped ends a check that was asked to stop before it finished: it
// proved nothing, and it found nothing.
var errStopped = errors.New("store check stopped")

// checkLocked runs checkTree under a shared lock of the file (bbolt's
// read-only open): no agent writes it meanwhile, so what checkTree finds is
// damage, not another process's write in progress. A file another agent
// holds fails with errRunning. It runs before the file
// is opened for writing because a panic inside bolt.Open leaves the file
// mapped, and the mapping keeps the file's lock until the process ends. A
// file bbolt cannot open passes: the real open reports it.
func checkLocked(path string, timeout time.Duration) error {
	if fi, err := os.Stat(path); err != nil || fi.Size() == 0 {
		return nil
	}
	var ro *bolt.DB
	err := guard(func() (err error) {
		ro, err = bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: timeout})
		return err
	})
	if errors.Is(err, berrors.ErrTimeout) {
		return errRunning(path, err)
	}
	if err != nil {
		return nil
	}
	defer func() { _ = ro.Close() }() // read-only: nothing to lose
	return checkTree(path)
}

// checkTree checks the tree and the freelist of the store file at path. A
// missing, empty or unreadable file passes (bbolt makes or reports it).
func checkTree(path string) error {
	return checkFile(path, 0)
}

// checkTop is checkTree for the root page and the freelist only: what
// bbolt's own open and the first transaction read. Open runs it instead of
// checkTree when the file is, to the byte of its meta pages and to its size
// and modification time, the one a verified clean Close left (verified.go).
func checkTop(path string) error {
	return checkFile(path, 1)
}

// checkFile checks the file at path down to limit levels (0: all of it).
func checkFile(path string, limit int) error {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() == 0 {
		return nil
	}
	m, _, ok := currentMeta(f)
	if !ok {
		return nil
	}
	c, err := newTreeChecker(f, m)
	if err != nil {
		return err
	}
	c.limit = limit
	return c.check(m)
}

// newTreeChecker returns a checker of f's tree as meta page m describes it.
func newTreeChecker(f *os.File, m boltMeta) (*treeChecker, error) {
	if m.pageSize < 512 || m.pageSize > 1<<20 {
		return nil, fmt.Errorf("%w: page size %d", ErrDamaged, m.pageSize)
	}
	c := &treeChecker{f: f, pageSize: int64(m.pageSize), hwm: m.pgid, seen: make([]bool, max(m.pgid, 2))}
	c.seen[0], c.seen[1] = true, true
	return c, nil
}

// check walks the tree from m's root, then m's freelist.
func (c *treeChecker) check(m boltMeta) error {
	if err := c.page(m.root, "raíz"); err != nil {
		return err
	}
	if m.freelist == ^uint64(0) { // not synced: bbolt rebuilds it from the tree
		return nil
	}
	return c.freelist(m.freelist)
}

// read returns the n bytes at page id's offset off, reusing the buffer.
func (c *treeChecker) read(id uint64, off, n int64) ([]byte, error) {
	for len(c.bufs) <= c.depth {
		c.bufs = append(c.bufs, nil)
	}
	if int64(cap(c.bufs[c.depth])) < n {
		c.bufs[c.depth] = make([]byte, n)
	}
	b := c.bufs[c.depth][:n]
	if _, err := c.f.ReadAt(b, int64(id)*c.pageSize+off); err != nil {
		return nil, fmt.Errorf("%w: page %d: %w", ErrDamaged, id, err)
	}
	return b, nil
}

// header reads page id (its first page, then its overflow if it has one),
// checks its id and returns its flags, element count and bytes. The bytes
// are the checker's buffer, valid until the next read.
func (c *treeChecker) header(id uint64) (flags uint16, count int, data []byte, err error) {
	h, err := c.read(id, 0, c.pageSize)
	if err != nil {
		return 0, 0, nil, err
	}
	le := binary.NativeEndian
	flags, count = le.Uint16(h[8:]), int(le.Uint16(h[10:]))
	overflow := uint64(le.Uint32(h[12:]))
	if got := le.Uint64(h[0:]); got != id {
		return 0, 0, nil, fmt.Errorf("%w: page %d has the header of page %d (flags %#x)", ErrDamaged, id, got, flags)
	}
	if id+overflow >= c.hwm {
		return 0, 0, nil, fmt.Errorf("%w: page %d overflows past the end (%d pages)", ErrDamaged, id, c.hwm)
	}
	for i := id + 1; i <= id+overflow; i++ {
		if c.seen[i] {
			return 0, 0, nil, fmt.Errorf("%w: page %d is used twice", ErrDamaged, i)
		}
		c.seen[i] = true
	}
	if overflow > 0 {
		if h, err = c.read(id, 0, int64(overflow+1)*c.pageSize); err != nil {
			return 0, 0, nil, err
		}
	}
	return flags, count, h, nil
}

// page checks the branch or leaf page id and everything below it; what
// names the bucket it belongs to, for the error.
func (c *treeChecker) page(id uint64, what string) error {
	if c.limit > 0 && c.depth >= c.limit {
		return nil
	}
	select {
	case <-c.stop:
		return errStopped
	default:
	}
	if id < 2 || id >= c.hwm {
		return fmt.Errorf("%w: bucket %s: page %d outside the file (%d pages)", ErrDamaged, what, id, c.hwm)
	}
	if c.seen[id] {
		return fmt.Errorf("%w: bucket %s: page %d is used twice", ErrDamaged, what, id)
	}
	c.seen[id] = true
	c.depth++
	defer func() { c.depth-- }()
	flags, count, data, err := c.header(id)
	if err != nil {
		return err
	}
	if flags != boltBranchPage && flags != boltLeafPage || count == 0 && flags == boltBranchPage {
		return fmt.Errorf("%w: bucket %s: page %d has type %#x and %d elements", ErrDamaged, what, id, flags, count)
	}
	return c.elements(id, what, flags, count, data)
}

// elements checks the count elements of page data (a page of the file, or a
// bucket stored inline in its parent's value, with id 0).
func (c *treeChecker) elements(id uint64, what string, flags uint16, count int, data []byte) error {
	le := binary.NativeEndian
	span := int64(len(data))
	if int64(boltPageHeader+count*boltElemSize) > span {
		return fmt.Errorf("%w: bucket %s: page %d: %d elements do not fit", ErrDamaged, what, id, count)
	}
	for i := range count {
		at := int64(boltPageHeader + i*boltElemSize)
		e := data[at : at+boltElemSize]
		if flags == boltBranchPage {
			pos, ksize := int64(le.Uint32(e[0:])), int64(le.Uint32(e[4:]))
			if at+pos+ksize > span {
				return fmt.Errorf("%w: bucket %s: page %d: element %d outside the page", ErrDamaged, what, id, i)
			}
			if err := c.page(le.Uint64(e[8:]), what); err != nil {
				return err
			}
			continue
		}
		eflags, pos := le.Uint32(e[0:]), int64(le.Uint32(e[4:]))
		ksize, vsize := int64(le.Uint32(e[8:])), int64(le.Uint32(e[12:]))
		if at+pos+ksize+vsize > span {
			return fmt.Errorf("%w: bucket %s: page %d: element %d outside the page", ErrDamaged, what, id, i)
		}
		if eflags&boltBucketFlag == 0 {
			continue
		}
		k := data[at+pos : at+pos+ksize]
		v := data[at+pos+ksize : at+pos+ksize+vsize]
		if len(v) < boltBucketHeader {
			return fmt.Errorf("%w: bucket %s: page %d: bucket %q has no header", ErrDamaged, what, id, k)
		}
		child := string(k)
		if root := le.Uint64(v); root != 0 {
			if err := c.page(root, child); err != nil {
				return err
			}
			continue
		}
		inline := v[boltBucketHeader:] // a small bucket: a leaf page inside the value
		if len(inline) < boltPageHeader {
			return fmt.Errorf("%w: bucket %s: its inline page is cut short", ErrDamaged, child)
		}
		if f := le.Uint16(inline[8:]); f != boltLeafPage {
			return fmt.Errorf("%w: bucket %s: its inline page has type %#x", ErrDamaged, child, f)
		}
		if err := c.elements(0, child, boltLeafPage, int(le.Uint16(inline[10:])), inline); err != nil {
			return err
		}
	}
	return nil
}

// freelist checks the freelist page id: its type, and that it names only
// pages of the file that no bucket uses (bbolt would write over them).
func (c *treeChecker) freelist(id uint64) error {
	if id < 2 || id >= c.hwm || c.seen[id] {
		return fmt.Errorf("%w: freelist page %d is outside the file or used by a bucket", ErrDamaged, id)
	}
	c.seen[id] = true
	flags, count, data, err := c.header(id)
	if err != nil {
		return err
	}
	if flags != boltFreelistPage {
		return fmt.Errorf("%w: freelist page %d has type %#x", ErrDamaged, id, flags)
	}
	le := binary.NativeEndian
	span := int64(len(data))
	n, at := int64(count), int64(boltPageHeader)
	if count == 0xFFFF { // the real count is the first id
		if span < boltPageHeader+8 {
			return fmt.Errorf("%w: freelist page %d is cut short", ErrDamaged, id)
		}
		n, at = int64(le.Uint64(data[at:])), at+8
	}
	if n < 0 || n > (span-at)/8 {
		return fmt.Errorf("%w: freelist page %d: %d ids do not fit", ErrDamaged, id, n)
	}
	for i := range n {
		p := le.Uint64(data[at+8*i:])
		if p < 2 || p >= c.hwm || c.seen[p] {
			return fmt.Errorf("%w: freelist page %d names page %d, which is outside the file, in use or named twice", ErrDamaged, id, p)
		}
		c.seen[p] = true
	}
	return nil
}
