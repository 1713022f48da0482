//go:build !windows

package durable

import "os"

// renameOver renames tmp to path, replacing path: a rename over an open
// file succeeds outside Windows, so there is nothing to retry.
func renameOver(tmp, path string) error { return os.Rename(tmp, path) }
