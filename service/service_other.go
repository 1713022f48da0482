//go:build !linux && !windows

package service

// Install is not supported on this platform.
func Install(Config) error { return ErrUnsupported }

// Uninstall is not supported on this platform.
func Uninstall(string) error { return ErrUnsupported }

// Start is not supported on this platform.
func Start(string) error { return ErrUnsupported }

// Stop is not supported on this platform.
func Stop(string) error { return ErrUnsupported }

// Query is not supported on this platform.
func Query(string) (State, error) { return State{}, ErrUnsupported }
