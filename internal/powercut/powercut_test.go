//go:build linux

package powercut

import (
	"bytes"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/cfe-agent/cfe-agent/durable"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
)

// childEnv switches the test binary into the role of the recorded process
// (writeKnownFiles); its value is the folder to write in.
const childEnv = "CFE_POWERCUT_TEST_CHILD"

func TestMain(m *testing.M) {
	if root := os.Getenv(childEnv); root != "" {
		if err := writeKnownFiles(root, os.Getenv(childEnv+"_ACKS")); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// fill returns n bytes of c.
func fill(c byte, n int) []byte { return bytes.Repeat([]byte{c}, n) }

// writeKnownFiles makes, under root, the calls TestParseTrace expects:
//
//	datos: A×8192 at 0, fdatasync, ack, B×4096 at 4096, C×6144 at 2048, ftruncate 16384
//	j.json: "v1" through durable.WriteFile (fsync, rename, folder fsync),
//	        then "v2" through a temporary file and a rename whose folder is not synced
func writeKnownFiles(root, acks string) error {
	f, err := os.OpenFile(filepath.Join(root, "datos"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	a, err := os.OpenFile(acks, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer a.Close()
	steps := []func() error{
		func() error { _, err := f.WriteAt(fill('A', 8192), 0); return err },
		func() error { return unix.Fdatasync(int(f.Fd())) },
		func() error { _, err := a.WriteString("ack-1\nack-2\n"); return err },
		func() error { _, err := f.WriteAt(fill('B', 4096), 4096); return err },
		func() error { _, err := f.WriteAt(fill('C', 6144), 2048); return err },
		func() error { return f.Truncate(16384) },
		func() error { return durable.WriteFile(filepath.Join(root, "j.json"), []byte("v1"), true) },
		func() error {
			tmp := filepath.Join(root, ".j.tmp")
			if err := os.WriteFile(tmp, []byte("v2"), 0o600); err != nil {
				return err
			}
			t, err := os.Open(tmp)
			if err != nil {
				return err
			}
			err = t.Sync()
			t.Close()
			if err != nil {
				return err
			}
			return os.Rename(tmp, filepath.Join(root, "j.json"))
		},
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

// record runs writeKnownFiles under strace and parses its trace.
func record(t *testing.T) (*Recording, string) {
	t.Helper()
	strace := testtool.Require(t, "strace")
	root, dir := t.TempDir(), t.TempDir()
	trace, acks := filepath.Join(dir, "trace"), filepath.Join(dir, "acks")
	args := Command(strace, trace, os.Args[0], "-test.run=^$")
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), childEnv+"="+root, childEnv+"_ACKS="+acks)
	if out, err := cmd.CombinedOutput(); err != nil {
		if strings.Contains(string(out), "PTRACE") {
			testtool.Unavailable(t, "strace cannot trace here: %s", out)
		}
		t.Fatalf("the recorded child: %v\n%s", err, out)
	}
	f, err := os.Open(trace)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rec, err := ParseTrace(f, root, acks)
	if err != nil {
		t.Fatal(err)
	}
	return rec, root
}

// TestParseTrace checks the recording of a process whose calls are known:
// the operations, their order against the acknowledgement, and the states
// built from them.
func TestParseTrace(t *testing.T) {
	t.Parallel()
	rec, root := record(t)
	datos, j := filepath.Join(root, "datos"), filepath.Join(root, "j.json")

	var got []string
	name := func(p string) string { // the temporary file's random suffix aside
		rel, _ := filepath.Rel(root, p)
		if strings.HasPrefix(rel, ".j.json.tmp-") {
			return ".j.json.tmp-*"
		}
		return rel
	}
	for _, op := range rec.Ops {
		rel := name(op.Path)
		switch op.Kind {
		case OpWrite:
			got = append(got, fmt.Sprintf("write %s %d %c×%d", rel, op.Off, op.Data[0], len(op.Data)))
		case OpTruncate:
			got = append(got, fmt.Sprintf("truncate %s %d", rel, op.Size))
		case OpRename:
			got = append(got, fmt.Sprintf("rename %s %s", name(op.From), rel))
		default:
			got = append(got, fmt.Sprintf("%s %s", op.Kind, rel))
		}
	}
	want := []string{
		"create datos", "write datos 0 A×8192", "sync datos", "write datos 4096 B×4096", "write datos 2048 C×6144",
		"truncate datos 16384",
		// durable.WriteFile; its deferred remove fails after the rename
		// (ENOENT): a failed call is no operation.
		"create .j.json.tmp-*", "write .j.json.tmp-* 0 v×2", "sync .j.json.tmp-*", "rename .j.json.tmp-* j.json", "sync .",
		"create .j.tmp", "truncate .j.tmp 0", "write .j.tmp 0 v×2", "sync .j.tmp", "rename .j.tmp j.json",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("recorded operations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	if len(rec.Acks) != 2 || rec.Acks[0].Line != "ack-1" || rec.Acks[1].Line != "ack-2" {
		t.Fatalf("acks %+v, want ack-1 and ack-2", rec.Acks)
	}
	fdatasync, folderSync := rec.Ops[2], rec.Ops[10]
	if fdatasync.Kind != OpSync || folderSync.Kind != OpSync || folderSync.Path != root {
		t.Fatalf("ops 2 and 10 are %s %s and %s %s, want the fdatasync and the sync of the folder",
			fdatasync.Kind, fdatasync.Path, folderSync.Kind, folderSync.Path)
	}
	if rec.Acks[0].Entry <= fdatasync.Exit || rec.Acks[0].Entry >= rec.Ops[3].Entry {
		t.Errorf("the ack (at %d) is not between the fdatasync (returned at %d) and the next write (%d)",
			rec.Acks[0].Entry, fdatasync.Exit, rec.Ops[3].Entry)
	}

	final, err := Snapshot(root)
	if err != nil {
		t.Fatal(err)
	}
	wantDatos := append(append(fill('A', 2048), fill('C', 6144)...), make([]byte, 8192)...)
	cases := []struct {
		name  string
		cut   int
		mode  Mode
		files map[string][]byte
	}{
		{"everything at the end: the files the process left", rec.End(), Everything, final},
		{"durable at the end: only the synced write and the synced rename",
			rec.End(), Durable, map[string][]byte{datos: fill('A', 8192), j: []byte("v1")}},
		{"everything at the end is what the disk holds", rec.End(), Everything,
			map[string][]byte{datos: wantDatos, j: []byte("v2")}},
		{"before the fdatasync returned: nothing durable", fdatasync.Exit, Durable, map[string][]byte{}},
		{"just after the fdatasync, the new file's name is not durable yet", fdatasync.Exit + 1, Durable, map[string][]byte{}},
		{"just after the fdatasync, kept", fdatasync.Exit + 1, Everything, map[string][]byte{datos: fill('A', 8192)}},
		{"once its folder was synced, the file is durable", folderSync.Exit + 1, Durable,
			map[string][]byte{datos: fill('A', 8192), j: []byte("v1")}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := rec.State(nil, c.cut, c.mode, nil)
			if len(st.Files) != len(c.files) {
				t.Errorf("%d files, want %d", len(st.Files), len(c.files))
			}
			for p, want := range c.files {
				if got, ok := st.Files[p]; !ok || !bytes.Equal(got, want) {
					t.Errorf("%s: %d bytes %.16q…, want %d bytes %.16q…", p, len(got), got, len(want), want)
				}
			}
		})
	}

	t.Run("sampled", func(t *testing.T) {
		rnd := rand.New(rand.NewPCG(1, 2))
		versions, torn, sizes := map[string]bool{}, 0, map[int]bool{}
		for range 400 {
			st := rec.State(nil, rec.End(), Sampled, rnd)
			versions[string(st.Files[j])] = true
			torn += st.Torn
			d := st.Files[datos]
			sizes[len(d)] = true
			if !bytes.Equal(d[:2048], fill('A', 2048)) {
				t.Fatalf("the synced first half page lost: %.16q", d[:2048])
			}
			// Every half page holds one write's bytes (or the older ones):
			// a page tears at its middle, not elsewhere.
			for h := 0; h+2048 <= len(d); h += 2048 {
				if half := d[h : h+2048]; !bytes.Equal(half, fill(half[0], 2048)) {
					t.Fatalf("half page at %d mixes writes: %.16q", h, half)
				}
			}
		}
		if !versions["v1"] || !versions["v2"] || len(versions) != 2 {
			t.Errorf("journal versions seen %v, want v1 (durable) and v2 (renamed, folder not synced)", versions)
		}
		if torn == 0 {
			t.Error("no page torn in 400 sampled states")
		}
		if !sizes[8192] || !sizes[16384] || len(sizes) != 2 {
			t.Errorf("sizes %v, want 8192 (truncate lost) and 16384", sizes)
		}
	})

	t.Run("lying disk", func(t *testing.T) {
		st := rec.State(nil, rec.End(), LyingDisk, rand.New(rand.NewPCG(3, 4)))
		if st.Dropped == "" {
			t.Fatal("no durable write dropped")
		}
		if d := st.Files[datos]; len(d) >= 2048 && bytes.Equal(d[:2048], fill('A', 2048)) {
			t.Errorf("the dropped write %s is still there", st.Dropped)
		}
	})
}

// TestParseTrace_Lines reads strace's line forms: calls split between
// threads, padded results, failed calls, calls cut by the process's end.
func TestParseTrace_Lines(t *testing.T) {
	t.Parallel()
	hx := func(s string) string {
		var b strings.Builder
		for _, c := range []byte(s) {
			fmt.Fprintf(&b, `\x%02x`, c)
		}
		return b.String()
	}
	f := func(path string) string { return hx("/r/" + path) }
	cases := []struct {
		name    string
		trace   string
		want    string // ops as "kind path off len entry exit"
		wantErr string
	}{
		{"one line", `10 pwrite64(3<` + f("db") + `>, "` + hx("abc") + `", 3, 4096) = 3`,
			"write /r/db 4096 3 0 1", ""},
		{"split by another thread, padded result",
			`10 pwrite64(3<` + f("db") + `>, "` + hx("abc") + `", 3, 0 <unfinished ...>
11 fdatasync(3<` + f("db") + `>) = 0
10 <... pwrite64 resumed>)          = 2`,
			"write /r/db 0 2 0 5\nsync /r/db 0 0 2 3", ""},
		{"failed and unfinished calls are no operations",
			`10 pwrite64(3<` + f("db") + `>, "` + hx("abc") + `", 3, 0) = -1 ENOSPC (No space left on device)
11 fdatasync(3<` + f("db") + `> <unfinished ...>
11 <... fdatasync resumed>) = ?
12 fsync(3<` + f("db") + `> <unfinished ...>`, "", ""},
		{"files outside the root are ignored", `10 write(1<` + hx("/dev/pts/0") + `>, "` + hx("x") + `", 1) = 1`, "", ""},
		{"write follows the descriptor's offset",
			`10 openat(AT_FDCWD<` + hx("/") + `>, "` + f("j") + `", O_RDWR|O_CREAT|O_TRUNC, 0600) = 4<` + f("j") + `>
10 write(4<` + f("j") + `>, "` + hx("ab") + `", 2) = 2
10 write(4<` + f("j") + `>, "` + hx("cd") + `", 2) = 2`,
			"create /r/j 0 0 0 1\ntruncate /r/j 0 0 0 1\nwrite /r/j 0 2 2 3\nwrite /r/j 2 2 4 5", ""},
		{"mkdir", `10 mkdirat(AT_FDCWD<` + hx("/") + `>, "` + f("d") + `", 0700) = 0
10 mkdirat(AT_FDCWD<` + hx("/") + `>, "` + f("d") + `", 0700) = -1 EEXIST (File exists)`, "mkdir /r/d 0 0 0 1", ""},
		{"a relative rename", `10 renameat(AT_FDCWD<` + hx("/r") + `>, "` + hx("a") + `", AT_FDCWD<` + hx("/r") + `>, "` + hx("b") + `") = 0`,
			"rename /r/b 0 0 0 1", ""},
		{"a string cut by strace", `10 pwrite64(3<` + f("db") + `>, "` + hx("abc") + `"..., 9, 0) = 9`, "", "longer than strace's -s limit"},
		{"pwritev is refused", `10 pwritev(3<` + f("db") + `>, [{iov_base="` + hx("a") + `", iov_len=1}], 1, 0) = 1`, "", "not modelled"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec, err := ParseTrace(strings.NewReader(c.trace+"\n"), "/r", "/acks")
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, op := range rec.Ops {
				got = append(got, fmt.Sprintf("%s %s %d %d %d %d", op.Kind, op.Path, op.Off, len(op.Data), op.Entry, op.Exit))
			}
			if strings.Join(got, "\n") != c.want {
				t.Errorf("ops:\n%s\nwant:\n%s", strings.Join(got, "\n"), c.want)
			}
		})
	}
}

// TestRecording_State checks the page model on hand-made recordings: which
// bytes a state holds when a write is kept by pages or torn.
func TestRecording_State(t *testing.T) {
	t.Parallel()
	w := func(off int64, c byte, n, entry int) Op {
		return Op{Kind: OpWrite, Path: "/r/f", Off: off, Data: fill(c, n), Entry: entry, Exit: entry + 1}
	}
	sync := func(entry int) Op { return Op{Kind: OpSync, Path: "/r/f", Entry: entry, Exit: entry + 1} }
	rec := &Recording{Root: "/r", Ops: []Op{
		w(0, 'a', 3*PageSize, 0), sync(2), // durable
		w(PageSize/2, 'b', 2*PageSize, 4), // unsynced, crosses three pages
		sync(6),                           // returns at 7
	}}
	initial := map[string][]byte{"/r/f": fill('0', PageSize)}
	cases := []struct {
		name string
		cut  int
		mode Mode
		want []byte
	}{
		{"before the first sync returned", 3, Durable, fill('0', PageSize)},
		{"after it", 4, Durable, fill('a', 3*PageSize)},
		{"the second write in flight, kept", 5, Everything,
			append(append(fill('a', PageSize/2), fill('b', 2*PageSize)...), fill('a', PageSize/2)...)},
		{"during the second sync: not yet durable", 7, Durable, fill('a', 3*PageSize)},
		{"after the second sync: durable", 8, Durable,
			append(append(fill('a', PageSize/2), fill('b', 2*PageSize)...), fill('a', PageSize/2)...)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := rec.State(initial, c.cut, c.mode, nil).Files["/r/f"]
			if !bytes.Equal(got, c.want) {
				t.Errorf("got %d bytes %q…, want %d bytes %q…", len(got), clip(got), len(c.want), clip(c.want))
			}
		})
	}
	t.Run("sampled pages", func(t *testing.T) {
		rnd := rand.New(rand.NewPCG(5, 6))
		seen := map[string]bool{}
		for range 2000 {
			st := rec.State(initial, 7, Sampled, rnd)
			got := st.Files["/r/f"]
			if len(got) != 3*PageSize {
				t.Fatalf("%d bytes, want %d", len(got), 3*PageSize)
			}
			var shape []byte // one letter per half page
			for h := 0; h < len(got); h += PageSize / 2 {
				half := got[h : h+PageSize/2]
				if !bytes.Equal(half, fill(half[0], len(half))) {
					t.Fatalf("half page at %d mixes bytes", h)
				}
				shape = append(shape, half[0])
			}
			if shape[0] != 'a' || shape[5] != 'a' {
				t.Fatalf("bytes outside the unsynced write changed: %s", shape)
			}
			seen[string(shape)] = true
		}
		// Page 0 holds b only in its second half; pages 1 and 2 are whole
		// b, torn (either half) or old.
		for _, want := range []string{"aaaaaa", "abbbba", "aabbba", "abbaaa", "aaabba", "abbbaa"} {
			if !seen[want] {
				t.Errorf("shape %s never sampled (seen %v)", want, seen)
			}
		}
	})
}

// TestRecording_StateNames checks that a new file and its new folder exist
// after a cut only once the syncs of the folders above them returned.
func TestRecording_StateNames(t *testing.T) {
	t.Parallel()
	rec := &Recording{Root: "/r", Ops: []Op{
		{Kind: OpMkdir, Path: "/r/d", Entry: 0, Exit: 1},
		{Kind: OpCreate, Path: "/r/d/f", Entry: 2, Exit: 3},
		{Kind: OpWrite, Path: "/r/d/f", Data: []byte("x"), Entry: 4, Exit: 5},
		{Kind: OpSync, Path: "/r/d/f", Entry: 6, Exit: 7},
		{Kind: OpSync, Path: "/r/d", Entry: 8, Exit: 9},
		{Kind: OpSync, Path: "/r", Entry: 10, Exit: 11},
	}}
	cases := []struct {
		name  string
		cut   int
		mode  Mode
		files string
		dirs  string
	}{
		{"data synced, names not", 8, Durable, "", "/r"},
		{"the file's name synced, its folder's not", 10, Durable, "", "/r"},
		{"both names synced", 12, Durable, "/r/d/f=x", "/r /r/d"},
		{"names not synced, kept", 8, Everything, "/r/d/f=x", "/r /r/d"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := rec.State(nil, c.cut, c.mode, nil)
			var files []string
			for _, p := range slices.Sorted(maps.Keys(st.Files)) {
				files = append(files, p+"="+string(st.Files[p]))
			}
			if got := strings.Join(files, " "); got != c.files {
				t.Errorf("files %q, want %q", got, c.files)
			}
			if got := strings.Join(st.Dirs, " "); got != c.dirs {
				t.Errorf("folders %q, want %q", got, c.dirs)
			}
		})
	}
}

func clip(b []byte) string { return string(b[:min(len(b), 12)]) }
