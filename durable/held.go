package durable

import (
	"os"
	"time"
)

// Bounds of the retries of a file another handle holds for an instant: up
// to heldAttempts tries heldWait apart, about a second in all.
const (
	heldAttempts = 20
	heldWait     = 50 * time.Millisecond
)

// retryHeld runs op until it succeeds, fails with an error other than
// heldError's, or has been tried heldAttempts times. On Windows a file that
// another handle holds cannot be replaced or opened for an instant: Go opens
// files without FILE_SHARE_DELETE, so replacing config.yaml while the
// service or doctor reads it fails, and so does opening it while it is
// being replaced. Such a hold lasts a read. Elsewhere heldError is always
// false and the first try is final.
func retryHeld(op func() error) error {
	for attempt := 1; ; attempt++ {
		err := op()
		if err == nil || attempt == heldAttempts || !heldError(err) {
			return err
		}
		time.Sleep(heldWait)
	}
}

// renameOver renames tmp to path, replacing path, through retryHeld.
func renameOver(tmp, path string) error {
	return retryHeld(func() error { return os.Rename(tmp, path) })
}

// ReadFile reads a file that WriteFile may be replacing at the same moment
// (config.yaml), through retryHeld: the reading side of the same race.
func ReadFile(path string) ([]byte, error) {
	var b []byte
	err := retryHeld(func() error {
		var err error
		b, err = os.ReadFile(path)
		return err
	})
	return b, err
}
