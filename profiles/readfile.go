package profiles

import (
	"os"
	"time"
)

// Bounds of readFile's retries: about a second in all.
const (
	readTries = 20
	readPause = 50 * time.Millisecond
)

// readFile reads a file that durable.WriteFile may be replacing at the same
// moment (config.yaml). On Windows opening it while another process or
// goroutine moves the new file into place fails for an instant (a sharing
// violation: Go opens files without FILE_SHARE_DELETE, and the old file is
// being replaced); readFile tries again, a bounded number of times, on the
// errors transientOpenError names. Elsewhere the replacement is an atomic
// rename and the first try is final.
func readFile(path string) ([]byte, error) {
	for try := 1; ; try++ {
		b, err := os.ReadFile(path)
		if err == nil || try == readTries || !transientOpenError(err) {
			return b, err
		}
		time.Sleep(readPause)
	}
}
