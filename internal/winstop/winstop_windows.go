package winstop

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/cfe-agent/cfe-agent/service"
)

// stopWindowClass is the hidden window's class name; tests find the window
// by it.
const stopWindowClass = "CfeAgentStopWindow"

// endSessionWait bounds how long WM_ENDSESSION waits for the agent to close:
// Windows offers to end a program that has not answered after 5 s.
const endSessionWait = 4 * time.Second

// Window messages and constants of user32 (not in golang.org/x/sys/windows).
const (
	wmDestroy         = 0x0002
	wmClose           = 0x0010
	wmQueryEndSession = 0x0011
	wmEndSession      = 0x0016
	// wmStopWindowDone is posted by the agent once it has closed: the
	// window destroys itself and its loop ends.
	wmStopWindowDone = 0x8000 + 1 // WM_APP + 1
)

var (
	user32               = windows.NewLazySystemDLL("user32.dll")
	procRegisterClassExW = user32.NewProc("RegisterClassExW")
	procCreateWindowExW  = user32.NewProc("CreateWindowExW")
	procDefWindowProcW   = user32.NewProc("DefWindowProcW")
	procDestroyWindow    = user32.NewProc("DestroyWindow")
	procGetMessageW      = user32.NewProc("GetMessageW")
	procTranslateMessage = user32.NewProc("TranslateMessage")
	procDispatchMessageW = user32.NewProc("DispatchMessageW")
	procPostMessageW     = user32.NewProc("PostMessageW")
	procPostQuitMessage  = user32.NewProc("PostQuitMessage")
)

// wndClassEx is WNDCLASSEXW.
type wndClassEx struct {
	size       uint32
	style      uint32
	wndProc    uintptr
	clsExtra   int32
	wndExtra   int32
	instance   windows.Handle
	icon       windows.Handle
	cursor     windows.Handle
	background windows.Handle
	menuName   *uint16
	className  *uint16
	iconSm     windows.Handle
}

// msg is MSG.
type msg struct {
	hwnd    windows.HWND
	message uint32
	wParam  uintptr
	lParam  uintptr
	time    uint32
	pt      struct{ x, y int32 }
	private uint32
}

// stopWindow is the hidden window of one agent run.
type stopWindow struct {
	hwnd   windows.HWND
	cancel context.CancelCauseFunc
	closed chan struct{} // closed once the agent has closed (done)
}

// stopWindows maps a window handle to its stopWindow, for the window
// procedure (one callback serves every window: Windows callbacks are a
// limited resource).
var stopWindows sync.Map

// errEndSession, errWindowClose are the causes the window cancels with; the
// agent logs them with "shutting down".
var (
	errEndSession  = errors.New("Windows is ending the session (log-off, restart or shutdown)")
	errWindowClose = errors.New("WM_CLOSE (taskkill, end task or an installer)")
)

// registerStopClass registers the window class once per process.
var registerStopClass = sync.OnceValue(func() error {
	name, err := windows.UTF16PtrFromString(stopWindowClass)
	if err != nil {
		return err
	}
	var instance windows.Handle
	if err := windows.GetModuleHandleEx(0, nil, &instance); err != nil {
		return fmt.Errorf("GetModuleHandleEx: %w", err)
	}
	wc := wndClassEx{
		wndProc:   windows.NewCallback(stopWindowProc),
		instance:  instance,
		className: name,
	}
	wc.size = uint32(unsafe.Sizeof(wc))
	if atom, _, err := procRegisterClassExW.Call(uintptr(unsafe.Pointer(&wc))); atom == 0 {
		return fmt.Errorf("RegisterClassEx: %w", err)
	}
	return nil
})

// Watch returns ctx canceled when Windows asks the (non-service) agent to
// stop through its hidden window, and done, which the caller calls once the
// agent has closed: it lets a waiting WM_ENDSESSION return and destroys the
// window. Without a window (none could be made) ctx stops only on signals,
// and the error says why. Under the service control manager it does
// nothing: the manager stops the service.
func Watch(ctx context.Context) (context.Context, func(), error) {
	if service.IsService() {
		return ctx, func() {}, nil
	}
	ctx, cancel := context.WithCancelCause(ctx)
	w := &stopWindow{cancel: cancel, closed: make(chan struct{})}
	created := make(chan error, 1)
	go w.loop(created)
	if err := <-created; err != nil {
		return ctx, func() { cancel(nil) }, err
	}
	var once sync.Once
	return ctx, func() {
		once.Do(func() {
			close(w.closed)
			_, _, _ = procPostMessageW.Call(uintptr(w.hwnd), wmStopWindowDone, 0, 0)
			cancel(nil)
		})
	}, nil
}

// loop creates the window on a thread of its own (a window belongs to the
// thread that made it, and only that thread gets its messages) and pumps its
// messages until the window is destroyed.
func (w *stopWindow) loop(created chan<- error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := registerStopClass(); err != nil {
		created <- err
		return
	}
	class, _ := windows.UTF16PtrFromString(stopWindowClass)
	title, _ := windows.UTF16PtrFromString("cfe-agent")
	// A top-level, never shown window (no WS_VISIBLE, no parent).
	hwnd, _, err := procCreateWindowExW.Call(0, uintptr(unsafe.Pointer(class)), uintptr(unsafe.Pointer(title)),
		0, 0, 0, 0, 0, 0, 0, 0, 0)
	if hwnd == 0 {
		created <- fmt.Errorf("CreateWindowEx: %w", err)
		return
	}
	w.hwnd = windows.HWND(hwnd)
	stopWindows.Store(w.hwnd, w)
	defer stopWindows.Delete(w.hwnd)
	created <- nil
	var m msg
	for {
		r, _, _ := procGetMessageW.Call(uintptr(unsafe.Pointer(&m)), 0, 0, 0)
		if int32(r) <= 0 { // WM_QUIT, or an error (-1)
			return
		}
		_, _, _ = procTranslateMessage.Call(uintptr(unsafe.Pointer(&m)))
		_, _, _ = procDispatchMessageW.Call(uintptr(unsafe.Pointer(&m)))
	}
}

// stopWindowProc is the window procedure of every stop window.
func stopWindowProc(hwnd windows.HWND, message uint32, wParam, lParam uintptr) uintptr {
	v, ok := stopWindows.Load(hwnd)
	if !ok {
		r, _, _ := procDefWindowProcW.Call(uintptr(hwnd), uintptr(message), wParam, lParam)
		return r
	}
	w := v.(*stopWindow)
	switch message {
	case wmClose:
		// Not DefWindowProc's DestroyWindow: the window lives until the
		// agent has closed.
		w.cancel(errWindowClose)
		return 0
	case wmQueryEndSession:
		// The session may still go on (another program can refuse): the
		// agent agrees and stops only at WM_ENDSESSION.
		return 1
	case wmEndSession:
		if wParam != 0 {
			w.cancel(errEndSession)
			select {
			case <-w.closed:
			case <-time.After(endSessionWait):
			}
		}
		return 0
	case wmStopWindowDone:
		_, _, _ = procDestroyWindow.Call(uintptr(hwnd))
		return 0
	case wmDestroy:
		_, _, _ = procPostQuitMessage.Call(0)
		return 0
	}
	r, _, _ := procDefWindowProcW.Call(uintptr(hwnd), uintptr(message), wParam, lParam)
	return r
}
