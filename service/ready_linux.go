package service

import "github.com/coreos/go-systemd/v22/daemon"

// The states of sd_notify(3) the agent sends.
const (
	sdReady    = daemon.SdNotifyReady
	sdStopping = daemon.SdNotifyStopping
)

// notifySystemd sends state to the socket $NOTIFY_SOCKET names (set by
// systemd for a Type=notify unit); without it, nothing is sent.
func notifySystemd(state string) error {
	_, err := daemon.SdNotify(false, state)
	return err
}
