package printer

import (
	"bytes"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
)

// fakeThermal is an ESC/POS printer on a stream (a TCP connection, a
// pseudo-terminal): it records the bytes it receives and answers the
// real-time status queries (DLE EOT n) among them, as a printer does, with
// its current state.
type fakeThermal struct {
	mu       sync.Mutex
	data     []byte // received, without the status queries
	queries  int
	paperEnd bool
	cover    bool
	// afterQueries, when > 0, runs out of paper once that many queries
	// have been answered (the paper ends during a job).
	afterQueries int
	hangUp       bool // close the connection instead of answering a query
}

// serve reads rw until it ends, answering status queries.
func (f *fakeThermal) serve(rw io.ReadWriter) {
	var pending []byte
	buf := make([]byte, 4096)
	for {
		n, err := rw.Read(buf)
		pending = append(pending, buf[:n]...)
		i := 0
		for i < len(pending) {
			if pending[i] != 0x10 {
				f.record(pending[i])
				i++
				continue
			}
			if len(pending)-i < 3 {
				break // the rest of the command comes in the next read
			}
			if pending[i+1] != 0x04 {
				f.record(pending[i])
				i++
				continue
			}
			answer, hangUp := f.answer(pending[i+2])
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

func (f *fakeThermal) record(b byte) {
	f.mu.Lock()
	f.data = append(f.data, b)
	f.mu.Unlock()
}

// answer is the status byte for DLE EOT n.
func (f *fakeThermal) answer(n byte) (byte, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.hangUp {
		return 0, true
	}
	f.queries++
	if f.afterQueries > 0 && f.queries > f.afterQueries {
		f.paperEnd = true
	}
	b := byte(0x12)
	switch n {
	case 1:
		if f.paperEnd || f.cover {
			b |= 0x08 // offline
		}
	case 2:
		if f.cover {
			b |= 0x04
		}
		if f.paperEnd {
			b |= 0x20
		}
	case 4:
		if f.paperEnd {
			b |= 0x60
		}
	}
	return b, false
}

// received returns the bytes received so far, without status queries.
func (f *fakeThermal) received() []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	return bytes.Clone(f.data)
}

func (f *fakeThermal) queryCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.queries
}

// listen serves f on a TCP port of 127.0.0.1 until the test ends and
// returns its address.
func (f *fakeThermal) listen(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { l.Close(); wg.Wait() })
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
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				f.serve(c)
			}()
		}
	}()
	return l.Addr().String()
}
