package powercut

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
)

// PageSize is the unit a disk writes whole, or tears: a power cut may leave a
// write's pages each written or not, and a page half old and half new.
const PageSize = 4096

// Mode says which of the writes a power cut may or may not have kept a state
// keeps.
type Mode int

// The modes of State.
const (
	// Durable keeps only what completed syncs made durable.
	Durable Mode = iota
	// Everything keeps every write that started before the cut.
	Everything
	// Sampled keeps each write after its file's last completed sync or
	// not, whole or page by page, with some pages torn; and for a file
	// replaced by rename, the durable version or any later one.
	Sampled
	// LyingDisk is Sampled, and then loses one write that a completed sync
	// had made durable: a state no power cut can produce (the disk would
	// have lied about the sync), for checking that opening never panics.
	LyingDisk
)

func (m Mode) String() string {
	return [...]string{"durable", "everything", "sampled", "lying-disk"}[m]
}

// State is the content of the files under the recording's root after a
// power cut: path → bytes (a path missing does not exist).
type State struct {
	Cut   int
	Mode  Mode
	Files map[string][]byte
	Dirs  []string // the folders that exist, root first (the files' folders among them)

	Optional int    // writes and truncates a power cut could keep or lose
	Kept     int    // of those, kept whole
	Split    int    // of those, kept page by page
	Torn     int    // pages kept half old and half new
	Versions int    // files replaced by rename whose version was not the durable one
	Lost     int    // names created by the recording (files, folders) the cut lost
	Dropped  string // LyingDisk: the durable write lost
}

// End is a cut after every recorded call.
func (r *Recording) End() int {
	end := 0
	for _, op := range r.Ops {
		end = max(end, op.Exit+1)
	}
	return end
}

// Barriers returns the cuts around each sync of a file under the root: just
// before it starts (its writes may still be in flight), while it runs (its
// writes may be half on the disk), and just after it returns.
func (r *Recording) Barriers() []int {
	var cuts []int
	for _, op := range r.Ops {
		if op.Kind == OpSync {
			cuts = append(cuts, op.Entry, op.Exit, op.Exit+1)
		}
	}
	slices.Sort(cuts)
	return slices.Compact(cuts)
}

// Syncs counts the recorded syncs.
func (r *Recording) Syncs() int {
	n := 0
	for _, op := range r.Ops {
		if op.Kind == OpSync {
			n++
		}
	}
	return n
}

// State builds the files a power cut at cut leaves, from initial (the files
// under the root before the recording, durable) and the recorded calls that
// started before cut. rnd draws the choices of Sampled and LyingDisk.
//
// The model, per file: a write or truncate that returned before a sync of
// the same file started is durable once that sync has returned (fsync and
// fdatasync both: fdatasync also writes a size change needed to read the
// data). Any other write that started before the cut is kept or lost, as a
// whole or page by page (4 KiB, aligned in the file), and a page may be torn:
// its first or second half new, the other half as before. Kept writes are
// applied in the order they were made. A rename is durable once a sync of
// the target's folder that started after it returned has returned; a later
// rename that started before the cut may or may not be on the disk, whole
// (the renamed file's own data was synced before the rename, as
// durable does; if it was not, the sampling applies to it as to any
// file). The source of a rename is a temporary file: it is not part of the
// state.
func (r *Recording) State(initial map[string][]byte, cut int, mode Mode, rnd *rand.Rand) *State {
	st := &State{Cut: cut, Mode: mode, Files: map[string][]byte{}}
	barrier := map[string]int{} // path → Entry of its last sync that returned before cut
	sources := map[string]bool{}
	paths := map[string]bool{}
	exists := map[string]bool{r.Root: true} // names, as the calls before cut saw them
	dirs := map[string]bool{r.Root: true}
	for p := range initial {
		paths[p], exists[p] = true, true
		for d := filepath.Dir(p); under(r.Root, d); d = filepath.Dir(d) {
			exists[d], dirs[d] = true, true
		}
	}
	moved := map[string]movedFile{} // files that took their name with their folder's rename
	created := map[string]Op{}      // names the recording created
	for _, op := range r.Ops {
		if op.Kind == OpRename {
			sources[op.From] = true
		}
		if op.Entry >= cut {
			continue
		}
		switch op.Kind {
		case OpSync:
			if op.Exit < cut {
				barrier[op.Path] = max(barrier[op.Path], op.Entry)
			}
		case OpWrite, OpTruncate:
			paths[op.Path] = true
		case OpCreate, OpMkdir:
			if !exists[op.Path] {
				created[op.Path], exists[op.Path] = op, true
			}
			if op.Kind == OpMkdir {
				dirs[op.Path] = true
			}
		case OpRename:
			if !dirs[op.From] {
				paths[op.Path], exists[op.Path] = true, true
				delete(exists, op.From)
				break
			}
			// A folder: its name is new like a created one's, and its
			// files move with it.
			if !exists[op.Path] {
				created[op.Path] = op
			}
			dirs[op.Path], exists[op.Path] = true, true
			for p := range paths {
				if rel, err := filepath.Rel(op.From, p); err == nil && under(op.From, p) && p != op.From {
					to := filepath.Join(op.Path, rel)
					paths[to], moved[to] = true, movedFile{from: p, at: op.Entry}
				}
			}
		case OpUnlink:
			delete(exists, op.Path)
		}
	}
	b := &builder{r: r, cut: cut, mode: mode, rnd: rnd, barrier: barrier, st: st, lie: -1,
		created: created, kept: map[string]bool{}, moved: moved, sources: sources}
	if mode == LyingDisk {
		b.pickLie()
	}
	for _, d := range slices.Sorted(maps.Keys(dirs)) { // the root sorts first
		if !b.inSource(d) && b.visible(d) {
			st.Dirs = append(st.Dirs, d)
		}
	}
	for _, p := range slices.Sorted(maps.Keys(paths)) {
		if b.inSource(p) && !r.renamedTo(p) || !b.visible(p) {
			continue
		}
		if content, ok := b.file(p, initial); ok {
			st.Files[p] = content
		}
	}
	return st
}

// visible reports whether path's name, and the name of each folder above it
// up to the root, survive the cut: a name the recording created is durable
// once a sync of its folder that started after the creation returned; before
// that, the mode decides (once per name).
func (b *builder) visible(path string) bool {
	for p := path; p != b.r.Root && under(b.r.Root, p); p = filepath.Dir(p) {
		op, ok := b.created[p]
		if !ok {
			continue
		}
		kept, decided := b.kept[p]
		if !decided {
			e, synced := b.barrier[filepath.Dir(p)]
			switch {
			case synced && op.Exit < e:
				kept = true
			case b.mode == Everything:
				kept = true
			case b.mode == Sampled || b.mode == LyingDisk:
				kept = b.rnd.IntN(3) != 0
			}
			b.kept[p] = kept
			if !kept {
				b.st.Lost++
			}
		}
		if !kept {
			return false
		}
	}
	return true
}

// renamedTo reports whether some rename targets path.
func (r *Recording) renamedTo(path string) bool {
	for _, op := range r.Ops {
		if op.Kind == OpRename && op.Path == path {
			return true
		}
	}
	return false
}

// builder builds the files of one state.
type builder struct {
	r       *Recording
	cut     int
	mode    Mode
	rnd     *rand.Rand
	barrier map[string]int
	st      *State
	lie     int             // LyingDisk: index in r.Ops of the durable write to lose; -1 none
	created map[string]Op   // names the recording created before the cut
	kept    map[string]bool // whether a created name survives, once decided
	moved   map[string]movedFile
	sources map[string]bool // the sources of renames: temporary files and folders
}

// movedFile is a file that took its name when its folder was renamed: its
// content is the one from had when the rename started (at).
type movedFile struct {
	from string
	at   int
}

// inSource reports whether path is the source of a rename, or inside one.
func (b *builder) inSource(path string) bool {
	for src := range b.sources {
		if under(src, path) {
			return true
		}
	}
	return false
}

// durable reports whether op (a write or truncate) survives every power cut
// at b.cut.
func (b *builder) durable(op Op) bool {
	e, ok := b.barrier[op.Path]
	return ok && op.Exit < e
}

// pickLie chooses the durable write LyingDisk loses: one of the last 16
// durable writes to a file written in place (not a temporary file or folder
// that a rename then put in place: those are written whole before the
// rename, and a lost one is a damaged file of another kind).
func (b *builder) pickLie() {
	var cands []int
	for i, op := range b.r.Ops {
		if op.Kind == OpWrite && op.Entry < b.cut && !b.inSource(op.Path) && b.durable(op) {
			cands = append(cands, i)
		}
	}
	if len(cands) == 0 {
		return
	}
	cands = cands[max(0, len(cands)-16):]
	b.lie = cands[b.rnd.IntN(len(cands))]
	op := b.r.Ops[b.lie]
	b.st.Dropped = fmt.Sprintf("%s: %d bytes at %d", filepath.Base(op.Path), len(op.Data), op.Off)
}

// file builds path's content; false when the path does not exist.
func (b *builder) file(path string, initial map[string][]byte) ([]byte, bool) {
	// Which version of the name: the initial file, or one of the renames
	// over it that started before the cut.
	start, from := -1, "" // ops on path count from start (Entry > start)
	content, exists := initial[path]
	if m, ok := b.moved[path]; ok {
		content, exists = b.build(m.from, nil, -1, m.at), true
	}
	durableIdx := -1
	var renames []int
	for i, op := range b.r.Ops {
		if op.Kind != OpRename || op.Path != path || op.Entry >= b.cut {
			continue
		}
		renames = append(renames, i)
		if e, ok := b.barrier[filepath.Dir(path)]; ok && op.Exit < e {
			durableIdx = len(renames) - 1
		}
	}
	if len(renames) > 0 {
		pick := durableIdx
		if later := len(renames) - 1 - durableIdx; later > 0 {
			switch b.mode {
			case Everything:
				pick = len(renames) - 1
			case Sampled, LyingDisk:
				if b.rnd.IntN(2) == 0 {
					pick = durableIdx + 1 + b.rnd.IntN(later)
				}
			}
		}
		if pick != durableIdx {
			b.st.Versions++
		}
		if pick >= 0 {
			op := b.r.Ops[renames[pick]]
			start, from = op.Exit, op.From
			content, exists = b.build(op.From, nil, -1, op.Entry), true
		}
	}
	if from == "" {
		content = slices.Clone(content)
	}
	for _, op := range b.r.Ops {
		if op.Path == path && op.Entry > start && op.Entry < b.cut && (op.Kind == OpWrite || op.Kind == OpTruncate) {
			exists = true
			break
		}
	}
	if !exists {
		return nil, false
	}
	return b.build(path, content, start, b.cut), true
}

// build applies to content the writes and truncates of path that started
// after from and before until, each as the mode chooses.
func (b *builder) build(path string, content []byte, from, until int) []byte {
	for i, op := range b.r.Ops {
		if op.Path != path || op.Entry <= from || op.Entry >= until || (op.Kind != OpWrite && op.Kind != OpTruncate) {
			continue
		}
		if b.durable(op) {
			if i != b.lie {
				content = apply(content, op, 0, len(op.Data))
			}
			continue
		}
		b.st.Optional++
		switch b.mode {
		case Durable:
			continue
		case Everything:
			b.st.Kept++
			content = apply(content, op, 0, len(op.Data))
			continue
		}
		switch x := b.rnd.IntN(20); {
		case x < 8 || op.Kind == OpTruncate && x < 10:
			b.st.Kept++
			content = apply(content, op, 0, len(op.Data))
		case x < 13 || op.Kind == OpTruncate:
			// lost
		default:
			b.st.Split++
			content = b.pages(content, op)
		}
	}
	return content
}

// pages applies op page by page: each page of the file it touches is written,
// not written, or torn (one half new, the other as before).
func (b *builder) pages(content []byte, op Op) []byte {
	for lo := 0; lo < len(op.Data); {
		page := (op.Off + int64(lo)) / PageSize * PageSize
		hi := min(len(op.Data), int(page+PageSize-op.Off))
		switch x := b.rnd.IntN(20); {
		case x < 9:
			content = apply(content, op, lo, hi)
		case x < 16:
			// not written
		default:
			b.st.Torn++
			mid := int(page + PageSize/2 - op.Off) // the page's middle, in op.Data
			if x < 18 {
				content = apply(content, op, lo, max(lo, min(hi, mid)))
			} else {
				content = apply(content, op, min(hi, max(lo, mid)), hi)
			}
		}
		lo = hi
	}
	return content
}

// apply writes op.Data[lo:hi] (a write) or op's size (a truncate) to content.
func apply(content []byte, op Op, lo, hi int) []byte {
	if op.Kind == OpTruncate {
		if int64(len(content)) >= op.Size {
			return content[:op.Size]
		}
		return append(content, make([]byte, op.Size-int64(len(content)))...)
	}
	if lo >= hi {
		return content
	}
	end := op.Off + int64(hi)
	if int64(len(content)) < end {
		content = append(content, make([]byte, end-int64(len(content)))...)
	}
	copy(content[op.Off+int64(lo):end], op.Data[lo:hi])
	return content
}

// Snapshot reads every regular file under root.
func Snapshot(root string) (map[string][]byte, error) {
	files := map[string][]byte{}
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(path)
		files[path] = b
		return err
	})
	return files, err
}

// Materialize writes the state's files under dir in place of the root they
// were recorded under, creating folders as needed, and returns the path
// each recorded path now has.
func (s *State) Materialize(root, dir string) (func(string) string, error) {
	moved := func(p string) string {
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return p
		}
		return filepath.Join(dir, rel)
	}
	for _, d := range s.Dirs {
		if err := os.MkdirAll(moved(d), 0o700); err != nil {
			return nil, err
		}
	}
	for _, p := range slices.Sorted(maps.Keys(s.Files)) {
		to := moved(p)
		if err := os.MkdirAll(filepath.Dir(to), 0o700); err != nil {
			return nil, err
		}
		if err := os.WriteFile(to, s.Files[p], 0o600); err != nil {
			return nil, err
		}
	}
	return moved, nil
}
