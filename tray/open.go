package tray

import (
	"os/exec"
	"runtime"
)

// OpenDefault opens target (a URL or a folder) with the desktop's default
// application (xdg-open, open, rundll32's FileProtocolHandler), without
// waiting for it. The tray's menu and the agent's second start use it.
func OpenDefault(target string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", target)
	case "darwin":
		cmd = exec.Command("open", target)
	default:
		cmd = exec.Command("xdg-open", target)
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait() //nolint:errcheck // the opener's exit status says nothing useful
	return nil
}
