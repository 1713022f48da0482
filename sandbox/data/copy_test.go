package data_test

import (
	"os"

	"github.com/cfe-agent/cfe-agent/sandbox/data"
)

// copyAs copies dir's file of environment from as the file of environment to.
func copyAs(dir, from, to string) error {
	raw, err := os.ReadFile(data.Path(dir, from))
	if err != nil {
		return err
	}
	return os.WriteFile(data.Path(dir, to), raw, 0o600)
}
