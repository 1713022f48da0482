package tray

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"unsafe"

	"golang.org/x/sys/windows"
)

// The tray icon as fyne.io/systray creates it on Windows: a hidden window of
// class trayClass owning the notification-area icon trayIconID. A balloon is
// that icon modified with NIF_INFO (Shell_NotifyIconW), so it appears beside
// the agent's own icon. Both values are the library's; the lookup fails
// cleanly (no window) if a new version changes them.
const (
	trayClass  = "SystrayClass"
	trayIconID = 100

	nimModify   = 0x00000001
	nifInfo     = 0x00000010
	niifInfo    = 0x00000001
	niifError   = 0x00000003
	niifNoSound = 0x00000010
)

var (
	shell32              = windows.NewLazySystemDLL("shell32.dll")
	procShellNotifyIconW = shell32.NewProc("Shell_NotifyIconW")
)

// notifyIconData is Windows' NOTIFYICONDATAW (the Vista and later layout).
type notifyIconData struct {
	Size             uint32
	Wnd              windows.HWND
	ID, Flags        uint32
	CallbackMessage  uint32
	Icon             windows.Handle
	Tip              [128]uint16
	State, StateMask uint32
	Info             [256]uint16
	Timeout          uint32 // also uVersion
	InfoTitle        [64]uint16
	InfoFlags        uint32
	GUIDItem         windows.GUID
	BalloonIcon      windows.Handle
}

// notifier shows notifications as balloons of the agent's tray icon.
type notifier struct {
	log *slog.Logger
	mu  sync.Mutex
}

func newNotifier(log *slog.Logger) *notifier { return &notifier{log: log} }

func (nt *notifier) notify(n Notification) error {
	nt.mu.Lock()
	defer nt.mu.Unlock()
	hwnd, err := trayWindow()
	if err != nil {
		return err
	}
	nid := notifyIconData{Wnd: hwnd, ID: trayIconID, Flags: nifInfo, InfoFlags: niifInfo | niifNoSound}
	nid.Size = uint32(unsafe.Sizeof(nid))
	if n.Urgent || n.Failed {
		nid.InfoFlags = niifError
	}
	copyUTF16(nid.InfoTitle[:], n.Summary)
	copyUTF16(nid.Info[:], n.Body)
	if r, _, err := procShellNotifyIconW.Call(nimModify, uintptr(unsafe.Pointer(&nid))); r == 0 {
		return fmt.Errorf("balloon notification: %w", err)
	}
	return nil
}

// trayWindow finds this process's tray window.
func trayWindow() (windows.HWND, error) {
	var found windows.HWND
	pid := uint32(os.Getpid())
	cb := windows.NewCallback(func(hwnd windows.HWND, _ uintptr) uintptr {
		var owner uint32
		if _, err := windows.GetWindowThreadProcessId(hwnd, &owner); err != nil || owner != pid {
			return 1
		}
		var class [64]uint16
		if n, err := windows.GetClassName(hwnd, &class[0], int32(len(class))); err == nil && windows.UTF16ToString(class[:n]) == trayClass {
			found = hwnd
			return 0
		}
		return 1
	})
	// EnumWindows reports an error when the callback stops it: judge by found.
	_ = windows.EnumWindows(cb, nil)
	if found == 0 {
		return 0, errors.New("balloon notification: the tray icon's window was not found")
	}
	return found, nil
}

// copyUTF16 copies s into dst as UTF-16, cut to fit with its terminating NUL.
func copyUTF16(dst []uint16, s string) {
	u, err := windows.UTF16FromString(s)
	if err != nil {
		return
	}
	if len(u) > len(dst) {
		u = u[:len(dst)]
		u[len(u)-1] = 0
	}
	copy(dst, u)
}
