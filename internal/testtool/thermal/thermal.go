// Package thermal helps tests of ESC/POS printing: a fake thermal printer
// that records what it receives and answers real-time status queries, and
// the independent decoder (escpos-tools, in PHP) that reads the bytes back.
package thermal

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"golang.org/x/text/encoding/charmap"

	"github.com/cfe-agent/cfe-agent/internal/testtool"
)

// Printer is an ESC/POS printer on a stream (a TCP connection, a
// pseudo-terminal): it records the bytes it receives and answers the
// real-time status queries among them (DLE EOT n), as a printer does, with
// its current state. Its exported fields may be set before it serves.
type Printer struct {
	mu       sync.Mutex
	data     []byte // received, without the status queries
	queries  int
	PaperEnd bool
	Cover    bool // cover open
	// AfterQueries, when > 0, runs the paper out once that many queries
	// have been answered (the paper ends during a job).
	AfterQueries int
	HangUp       bool // close the connection instead of answering a query
}

// Serve reads rw until it ends, answering status queries.
func (p *Printer) Serve(rw io.ReadWriter) {
	var pending []byte
	buf := make([]byte, 4096)
	for {
		n, err := rw.Read(buf)
		pending = append(pending, buf[:n]...)
		i := 0
		for i < len(pending) {
			if pending[i] != 0x10 {
				p.record(pending[i])
				i++
				continue
			}
			if len(pending)-i < 3 {
				break // the rest of the command comes in the next read
			}
			if pending[i+1] != 0x04 {
				p.record(pending[i])
				i++
				continue
			}
			answer, hangUp := p.answer(pending[i+2])
			if hangUp {
				if c, ok := rw.(io.Closer); ok {
					c.Close()
				}
				return
			}
			if _, err := rw.Write([]byte{answer}); err != nil {
				return
			}
			i += 3
		}
		pending = pending[i:]
		if err != nil {
			return
		}
	}
}

func (p *Printer) record(b byte) {
	p.mu.Lock()
	p.data = append(p.data, b)
	p.mu.Unlock()
}

// answer is the status byte for DLE EOT n: n = 1 printer status (bit 3
// offline), 2 offline cause (bit 2 cover open, bit 5 paper end), 4 roll
// paper sensor (bits 5 and 6 paper end); bits 1 and 4 are always set.
func (p *Printer) answer(n byte) (byte, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.HangUp {
		return 0, true
	}
	p.queries++
	if p.AfterQueries > 0 && p.queries > p.AfterQueries {
		p.PaperEnd = true
	}
	b := byte(0x12)
	switch n {
	case 1:
		if p.PaperEnd || p.Cover {
			b |= 0x08
		}
	case 2:
		if p.Cover {
			b |= 0x04
		}
		if p.PaperEnd {
			b |= 0x20
		}
	case 4:
		if p.PaperEnd {
			b |= 0x60
		}
	}
	return b, false
}

// SetPaperEnd changes the paper sensor while the printer serves.
func (p *Printer) SetPaperEnd(end bool) {
	p.mu.Lock()
	p.PaperEnd = end
	p.mu.Unlock()
}

// Received returns the bytes received so far, without status queries.
func (p *Printer) Received() []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	return bytes.Clone(p.data)
}

// Queries is how many status queries the printer answered.
func (p *Printer) Queries() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.queries
}

// Listen serves p on a TCP port of 127.0.0.1 until the test ends and
// returns its address.
func (p *Printer) Listen(t testing.TB) string {
	t.Helper()
	addr, _ := p.ListenStoppable(t)
	return addr
}

// ListenStoppable is Listen, with stop: the printer switched off (the port
// refuses connections, and the open ones are cut), before the test ends.
func (p *Printer) ListenStoppable(t testing.TB) (addr string, stop func()) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	stop = sync.OnceFunc(func() {
		l.Close()
		mu.Lock()
		for _, c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	t.Cleanup(stop)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if errors.Is(err, net.ErrClosed) {
				return
			}
			if err != nil {
				continue
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { _ = c.Close() }()
				p.Serve(c)
			}()
		}
	}()
	return l.Addr().String(), stop
}

// Tools is escpos-tools' directory with its dependency under vendor/
// (shared/tools/escpos-tools, or the copy CFE_ESCPOS_TOOLS names). When the
// shared copy lacks vendor/ (a checkout that honoured the tool's .gitignore),
// Tools runs a copy of the tool with its own autoloader instead; see
// withAutoloader. The test is skipped without php, or fails under
// CFE_STRICT_TOOLS=1.
func Tools(t testing.TB) string {
	t.Helper()
	testtool.Require(t, "php")
	dir := os.Getenv("CFE_ESCPOS_TOOLS")
	if dir == "" {
		dir = filepath.Join(testtool.SharedDir(t), "tools", "escpos-tools")
	}
	if _, err := os.Stat(filepath.Join(dir, "esc2text.php")); err != nil {
		testtool.Unavailable(t, "escpos-tools not found in %s (see shared/tools/README.md; CFE_ESCPOS_TOOLS names another copy)", dir)
	}
	if _, err := os.Stat(filepath.Join(dir, "vendor", "autoload.php")); err == nil {
		return dir
	}
	return withAutoloader(t, dir)
}

// standInAutoload is the autoloader of a copy of escpos-tools that lacks its
// vendor/ folder. The tool's parser depends on escpos-php for one thing only:
// ParserContextImpl::byProfileName loads a CapabilityProfile and stores it,
// and nothing in the parser or the three scripts reads it back (text is
// decoded as CP437 by TextCmd itself, images by Imagick). So the copy gets a
// CapabilityProfile class of that name that carries nothing; every command's
// decoding is still the tool's own.
const standInAutoload = `<?php
spl_autoload_register(function ($class) {
    $prefix = 'ReceiptPrintHq\\EscposTools\\';
    if (strncmp($class, $prefix, strlen($prefix)) === 0) {
        $file = __DIR__ . '/../src/' . str_replace('\\', '/', substr($class, strlen($prefix))) . '.php';
        if (is_file($file)) {
            require $file;
        }
    } elseif ($class === 'Mike42\\Escpos\\CapabilityProfile') {
        require __DIR__ . '/CapabilityProfile.php';
    }
});
`

const standInProfile = `<?php
namespace Mike42\Escpos;

// Written for cfe-agent's tests: escpos-tools stores a profile and never reads it.
final class CapabilityProfile
{
    public static function load($name)
    {
        return new CapabilityProfile();
    }
}
`

// withAutoloader copies escpos-tools (a few dozen small files) into a
// temporary folder and adds the stand-in vendor/ of standInAutoload.
func withAutoloader(t testing.TB, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "escpos-tools")
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), raw, 0o644)
	})
	if err == nil {
		err = os.MkdirAll(filepath.Join(dst, "vendor"), 0o755)
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(dst, "vendor", "autoload.php"), []byte(standInAutoload), 0o644)
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(dst, "vendor", "CapabilityProfile.php"), []byte(standInProfile), 0o644)
	}
	if err != nil {
		t.Fatalf("preparing escpos-tools: %v", err)
	}
	return dst
}

// Text returns what esc2text reads in b, as the printer prints it with
// code page table: esc2text reads text bytes as CP437, so its output is
// turned back into the bytes it read and decoded with table.
func Text(t testing.TB, b []byte, table *charmap.Charmap) string {
	t.Helper()
	in := filepath.Join(t.TempDir(), "receipt.bin")
	if err := os.WriteFile(in, b, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("php", filepath.Join(Tools(t), "esc2text.php"), in).Output()
	if err != nil {
		t.Fatalf("esc2text: %v", err)
	}
	raw, err := charmap.CodePage437.NewEncoder().Bytes(out)
	if err != nil {
		t.Fatalf("esc2text's output is not CP437 text: %v", err)
	}
	text, err := table.NewDecoder().Bytes(raw)
	if err != nil {
		t.Fatal(err)
	}
	return string(text)
}
