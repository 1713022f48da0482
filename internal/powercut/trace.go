// Package powercut records the writes and sync barriers a process makes to
// its files and builds, from that recording, the disk states a power cut
// could leave behind, for tests that prove the store keeps every
// acknowledged CFE across a lost page cache (issue 23).
//
// # Recording
//
// The store's bbolt file is opened through bolt.Options.OpenFile, which can
// only return a real *os.File: bbolt then writes pages with pwrite64 and
// syncs with fdatasync on its descriptor, the headroom writes zeros through
// that same descriptor, and the numbering journal is written by
// durable (a temporary file, fsync, rename, fsync of the folder). A
// Go wrapper installed through the hook could see none of these. The
// recording is therefore made at the system-call level: the process under
// test runs under strace (Command), which logs every write, sync, truncate,
// rename, file creation and mkdir with its file, offset and bytes, and
// ParseTrace reads that log.
// strace needs no kernel support beyond ptrace (no FUSE, no device-mapper),
// and changes nothing in the code path it records.
//
// # Replaying
//
// Recording.State builds the files a power cut at a point of the recording
// leaves (replay.go): what the last completed sync of each file made durable,
// plus any subset of the later writes, whole, split at 4 KiB pages, or with a
// page torn (half old, half new); for a file replaced by rename, the version
// the last completed sync of its folder made durable or any later one; and a
// new file or folder only once its folder was synced, or by chance.
package powercut

import (
	"bufio"
	"cmp"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// OpKind is what a recorded system call did to a file.
type OpKind int

// The recorded operations.
const (
	OpWrite    OpKind = iota + 1 // write or pwrite64: Data at Off
	OpTruncate                   // ftruncate: the file's size becomes Size
	OpSync                       // fsync or fdatasync of Path (a file or a folder)
	OpRename                     // rename of From over Path
	OpUnlink                     // unlink of Path
	OpCreate                     // open with O_CREAT of Path: creates it if it did not exist
	OpMkdir                      // mkdir of Path
)

func (k OpKind) String() string {
	switch k {
	case OpWrite:
		return "write"
	case OpTruncate:
		return "truncate"
	case OpSync:
		return "sync"
	case OpRename:
		return "rename"
	case OpUnlink:
		return "unlink"
	case OpCreate:
		return "create"
	case OpMkdir:
		return "mkdir"
	}
	return "op" + strconv.Itoa(int(k))
}

// Op is one successful system call on a file under the recorded folder.
// Entry and Exit order it against every other call: a call made after
// another one returned has a larger Entry than that one's Exit. Calls that
// ran at the same time in different threads overlap.
type Op struct {
	Kind  OpKind
	Path  string // the file written, synced, truncated, the rename's target
	From  string // OpRename: the source
	Off   int64  // OpWrite
	Data  []byte // OpWrite: the bytes the call wrote (its result, for a short write)
	Size  int64  // OpTruncate
	Entry int    // when the call started (trace position)
	Exit  int    // when it returned
}

// Recording is the operations a traced process made on the files under Root,
// in the order the calls started, and the acknowledgements it wrote to its
// acknowledgement file (outside Root) after it had acknowledged something.
type Recording struct {
	Root string
	Ops  []Op
	Acks []Ack
}

// Ack is one line the process under test wrote to its acknowledgement file,
// and when the write started: a power cut after Entry may find the client
// already told.
type Ack struct {
	Line  string
	Entry int
}

// tracedCalls are the system calls Command asks strace for. writev, pwritev
// and fallocate are traced only to refuse them on a recorded file: the model
// has no use for them, and such a file would otherwise be recorded wrong.
var tracedCalls = []string{"write", "pwrite64", "writev", "pwritev", "pwritev2", "fsync", "fdatasync",
	"ftruncate", "fallocate", "openat", "lseek", "close", "rename", "renameat", "renameat2", "unlink", "unlinkat",
	"mkdir", "mkdirat"}

// Command returns the arguments that run argv under strace, bin being
// strace's path, writing the trace that ParseTrace reads to traceFile.
// Every string is logged in hexadecimal (-xx) and every descriptor with its
// path (-y); strings up to 4 MiB are logged whole.
func Command(bin, traceFile string, argv ...string) []string {
	args := []string{bin, "-f", "-qq", "-xx", "-y", "-s", strconv.Itoa(maxString), "-e", "signal=none",
		"-e", "trace=" + strings.Join(tracedCalls, ","), "-o", traceFile, "--"}
	return append(args, argv...)
}

// maxString is the longest string strace logs whole: a longer write would be
// cut in the trace, and ParseTrace refuses it.
const maxString = 4 << 20

// call is a system call as read from the trace, possibly across an
// "unfinished"/"resumed" pair of lines.
type call struct {
	name   string
	args   []string
	result string
	entry  int
	exit   int
}

// ParseTrace reads strace's log (made by Command) and returns the operations
// on files under root (root itself included, for the syncs of its folder),
// and the lines written to ackFile. Positions are counted in lines: a call
// on one line has Entry = 2·line and Exit = 2·line+1; a call split by another
// thread's call has its Entry at its "unfinished" line and its Exit at its
// "resumed" line.
func ParseTrace(r io.Reader, root, ackFile string) (*Recording, error) {
	given := filepath.Clean(root)
	root = given
	// strace prints the real paths of descriptors: read the trace with them,
	// and give the operations the caller's paths back at the end.
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	if real, err := filepath.EvalSymlinks(ackFile); err == nil {
		ackFile = real
	}
	rec := &Recording{Root: given}
	pending := map[string]string{} // thread → its unfinished line's text
	pendingAt := map[string]int{}
	fdPos := map[string]int64{} // "fd path" → the file offset write(2) uses
	br := bufio.NewReaderSize(r, 1<<20)
	for n := 0; ; n++ {
		line, err := br.ReadString('\n')
		if errors.Is(err, io.EOF) && line == "" {
			break
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
		line = strings.TrimRight(line, "\n")
		tid, text, ok := strings.Cut(line, " ")
		if !ok {
			return nil, fmt.Errorf("trace line %d: no thread id: %.80q", n+1, line)
		}
		text = strings.TrimLeft(text, " ")
		var c call
		switch {
		case strings.HasSuffix(text, " <unfinished ...>"):
			pending[tid] = strings.TrimSuffix(text, " <unfinished ...>")
			pendingAt[tid] = 2 * n
			continue
		case strings.HasPrefix(text, "<... "):
			start, ok := pending[tid]
			if !ok {
				return nil, fmt.Errorf("trace line %d: resumed call without its start: %.80q", n+1, line)
			}
			delete(pending, tid)
			_, rest, ok := strings.Cut(text, " resumed>")
			if !ok {
				return nil, fmt.Errorf("trace line %d: %.80q", n+1, line)
			}
			if c, ok = parseCall(start + rest); !ok {
				continue // the process ended inside the call: no result
			}
			c.entry, c.exit = pendingAt[tid], 2*n+1
		default:
			if c, ok = parseCall(text); !ok {
				continue
			}
			c.entry, c.exit = 2*n, 2*n+1
		}
		if ack, ok, err := c.ack(ackFile); err != nil || ok {
			if err != nil {
				return nil, fmt.Errorf("trace line %d: %w", n+1, err)
			}
			rec.Acks = append(rec.Acks, ack...)
			continue
		}
		ops, err := c.ops(root, given, fdPos)
		if err != nil {
			return nil, fmt.Errorf("trace line %d: %w", n+1, err)
		}
		rec.Ops = append(rec.Ops, ops...)
	}
	if root != given {
		for i := range rec.Ops {
			op := &rec.Ops[i]
			op.Path = given + strings.TrimPrefix(op.Path, root)
			if op.From != "" {
				op.From = given + strings.TrimPrefix(op.From, root)
			}
		}
	}
	// Split calls are listed at their exit: order them by their start.
	slices.SortStableFunc(rec.Ops, func(a, b Op) int { return cmp.Compare(a.Entry, b.Entry) })
	return rec, nil
}

// ack returns the lines of a write to ackFile.
func (c call) ack(ackFile string) ([]Ack, bool, error) {
	if c.name != "write" || len(c.args) < 2 {
		return nil, false, nil
	}
	if _, path, err := fdPath(c.args[0]); err != nil || path != ackFile {
		return nil, false, err
	}
	data, err := unhex(c.args[1])
	if err != nil {
		return nil, true, err
	}
	var acks []Ack
	for _, l := range strings.Split(strings.TrimSpace(data), "\n") {
		acks = append(acks, Ack{Line: l, Entry: c.entry})
	}
	return acks, true, nil
}

// parseCall splits "name(arg, arg) = result" into its parts. It reports false
// for a call without a result (the process ended inside it).
func parseCall(text string) (call, bool) {
	open := strings.IndexByte(text, '(')
	eq := strings.LastIndex(text, " = ") // strace pads the space before "=" to align results
	if open < 0 || eq < open {
		return call{}, false
	}
	head := strings.TrimRight(text[:eq], " ")
	if !strings.HasSuffix(head, ")") {
		return call{}, false
	}
	c := call{name: text[:open], result: text[eq+3:]}
	if strings.HasPrefix(c.result, "?") {
		return call{}, false
	}
	c.args = splitArgs(head[open+1 : len(head)-1])
	return c, true
}

// splitArgs splits strace's argument list at top-level commas. Strings are
// hexadecimal (-xx), so only arrays and structures nest.
func splitArgs(s string) []string {
	var args []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[', '{', '<':
			depth++
		case ']', '}', '>':
			depth--
		case ',':
			if depth == 0 {
				args = append(args, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	if strings.TrimSpace(s[start:]) != "" {
		args = append(args, strings.TrimSpace(s[start:]))
	}
	return args
}

// fdPath returns the path strace printed beside a descriptor ("3</a/b>").
func fdPath(arg string) (fd, path string, err error) {
	i := strings.IndexByte(arg, '<')
	if i < 0 || !strings.HasSuffix(arg, ">") {
		return arg, "", nil // a descriptor that is no file (or AT_FDCWD without -y)
	}
	p, err := unhex(arg[i+1 : len(arg)-1])
	return arg[:i], p, err
}

// unhex decodes strace's -xx string form ("\x2f\x74"), with or without quotes.
func unhex(s string) (string, error) {
	s = strings.TrimPrefix(s, `"`)
	if strings.HasSuffix(s, `"...`) {
		return "", errors.New("a string longer than strace's -s limit was cut")
	}
	s = strings.TrimSuffix(s, `"`)
	if len(s)%4 != 0 {
		return "", fmt.Errorf("not a -xx string: %.40q", s)
	}
	out := make([]byte, len(s)/4)
	for i := 0; i < len(s); i += 4 {
		if s[i] != '\\' || s[i+1] != 'x' {
			return "", fmt.Errorf("not a -xx string: %.40q", s)
		}
		if _, err := hex.Decode(out[i/4:i/4+1], []byte(s[i+2:i+4])); err != nil {
			return "", err
		}
	}
	return string(out), nil
}

// value returns the call's return value and whether it succeeded.
func (c call) value() (int64, bool) {
	v, _, _ := strings.Cut(c.result, " ")
	v, _, _ = strings.Cut(v, "<")
	n, err := strconv.ParseInt(v, 0, 64)
	return n, err == nil && n >= 0
}

// under reports whether path is root or inside it.
func under(root, path string) bool {
	return path == root || strings.HasPrefix(path, root+string(filepath.Separator))
}

// ops turns a successful call on a file under root into operations: an open
// that may create the file is an OpCreate (State tells a creation from the
// opening of an existing file), one that truncates it also an OpTruncate.
func (c call) ops(root, given string, fdPos map[string]int64) ([]Op, error) {
	if c.name != "openat" {
		op, keep, err := c.op(root, given, fdPos)
		if !keep || err != nil {
			return nil, err
		}
		return []Op{op}, nil
	}
	_, path, err := fdPath(c.result)
	if err != nil || !under(root, path) {
		return nil, err
	}
	fd, _, _ := strings.Cut(c.result, "<")
	fdPos[fd+" "+path] = 0
	var ops []Op
	flags := ""
	if len(c.args) > 2 {
		flags = c.args[2]
	}
	if strings.Contains(flags, "O_CREAT") {
		ops = append(ops, Op{Kind: OpCreate, Path: path, Entry: c.entry, Exit: c.exit})
	}
	if strings.Contains(flags, "O_TRUNC") {
		ops = append(ops, Op{Kind: OpTruncate, Path: path, Entry: c.entry, Exit: c.exit})
	}
	return ops, nil
}

// op turns a successful call on a file under root into an Op; keep is false
// for calls on other files, failed calls and calls that only move a file
// offset. fdPos follows the offsets write uses.
func (c call) op(root, given string, fdPos map[string]int64) (op Op, keep bool, err error) {
	ret, ok := c.value()
	if !ok {
		return Op{}, false, nil
	}
	op = Op{Entry: c.entry, Exit: c.exit}
	arg := func(i int) string {
		if i < len(c.args) {
			return c.args[i]
		}
		return ""
	}
	switch c.name {
	case "close":
		fd, path, err := fdPath(arg(0))
		delete(fdPos, fd+" "+path)
		return Op{}, false, err
	case "lseek":
		fd, path, err := fdPath(arg(0))
		if err != nil || !under(root, path) {
			return Op{}, false, err
		}
		fdPos[fd+" "+path] = ret
		return Op{}, false, nil
	}
	fd, path, err := fdPath(arg(0))
	if err != nil {
		return Op{}, false, err
	}
	switch c.name {
	case "write", "pwrite64":
		if !under(root, path) {
			return Op{}, false, nil
		}
		data, err := unhex(arg(1))
		if err != nil {
			return Op{}, false, err
		}
		op.Kind, op.Path, op.Data = OpWrite, path, []byte(data)[:ret]
		if c.name == "pwrite64" {
			op.Off, err = strconv.ParseInt(arg(3), 0, 64)
		} else {
			// The threads of a process share its descriptors and their
			// offsets; the files recorded here are written through write(2)
			// by one goroutine at a time.
			op.Off = fdPos[fd+" "+path]
			fdPos[fd+" "+path] = op.Off + ret
		}
		return op, true, err
	case "writev", "pwritev", "pwritev2", "fallocate":
		if under(root, path) {
			return Op{}, false, fmt.Errorf("%s on %s: not modelled", c.name, path)
		}
		return Op{}, false, nil
	case "fsync", "fdatasync":
		op.Kind, op.Path = OpSync, path
		return op, under(root, path), nil
	case "ftruncate":
		op.Kind, op.Path = OpTruncate, path
		op.Size, err = strconv.ParseInt(arg(1), 0, 64)
		return op, under(root, path), err
	case "rename", "renameat", "renameat2", "unlink", "unlinkat", "mkdir", "mkdirat":
		return c.pathOp(root, given)
	}
	return Op{}, false, nil
}

// pathOp reads a rename, an unlink or a mkdir: the paths are absolute, or
// relative to the folder strace printed beside the descriptor. A path under
// given (root as the caller named it, through a symbolic link) is read as
// under root.
func (c call) pathOp(root, given string) (Op, bool, error) {
	var paths []string
	for i := 0; i < len(c.args); i++ {
		a := c.args[i]
		if !strings.HasPrefix(a, `"`) {
			continue
		}
		p, err := unhex(a)
		if err != nil {
			return Op{}, false, err
		}
		if !filepath.IsAbs(p) && i > 0 {
			_, dir, err := fdPath(c.args[i-1])
			if err != nil {
				return Op{}, false, err
			}
			p = filepath.Join(dir, p)
		}
		p = filepath.Clean(p)
		if given != root && under(given, p) {
			p = root + strings.TrimPrefix(p, given)
		}
		paths = append(paths, p)
	}
	op := Op{Entry: c.entry, Exit: c.exit}
	switch {
	case strings.HasPrefix(c.name, "rename") && len(paths) == 2:
		op.Kind, op.From, op.Path = OpRename, paths[0], paths[1]
		if under(root, op.From) != under(root, op.Path) {
			return Op{}, false, fmt.Errorf("rename across the recorded folder: %s → %s", op.From, op.Path)
		}
	case strings.HasPrefix(c.name, "unlink") && len(paths) == 1:
		op.Kind, op.Path = OpUnlink, paths[0]
	case strings.HasPrefix(c.name, "mkdir") && len(paths) == 1:
		op.Kind, op.Path = OpMkdir, paths[0]
	default:
		return Op{}, false, fmt.Errorf("%s: unexpected arguments %v", c.name, c.args)
	}
	return op, under(root, op.Path), nil
}
