package testtool

import (
	"bytes"
	"sync"
	"time"
)

// SyncBuffer is a bytes.Buffer that a process or server goroutines write
// while the test reads it, and waits on.
type SyncBuffer struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	wrote chan struct{} // closed by the next Write; nil until Next asks
}

func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.wrote != nil {
		close(b.wrote)
		b.wrote = nil
	}
	return b.buf.Write(p)
}

// String returns what has been written so far.
func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Next returns a channel that the next Write closes. Take it before reading
// the buffer: a write between the read and the wait then ends the wait.
func (b *SyncBuffer) Next() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.wrote == nil {
		b.wrote = make(chan struct{})
	}
	return b.wrote
}

// Await waits until match accepts what has been written so far, checking it
// after each write, and returns that text and true; or the text and false
// once within passes or stop (nil: never) is closed, whichever comes first.
func (b *SyncBuffer) Await(stop <-chan struct{}, within time.Duration, match func(string) bool) (string, bool) {
	deadline := time.NewTimer(within)
	defer deadline.Stop()
	for {
		next := b.Next()
		if s := b.String(); match(s) {
			return s, true
		}
		select {
		case <-next:
		case <-stop:
			s := b.String()
			return s, match(s)
		case <-deadline.C:
			s := b.String()
			return s, match(s)
		}
	}
}
