package winstop

import (
	"context"
	"errors"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

var (
	procFindWindowW  = user32.NewProc("FindWindowW")
	procSendMessageW = user32.NewProc("SendMessageW")
)

// findStopWindow returns the hidden stop window of this process, as another
// program finds it: by its class name.
func findStopWindow(t *testing.T) uintptr {
	t.Helper()
	class, err := windows.UTF16PtrFromString(stopWindowClass)
	if err != nil {
		t.Fatal(err)
	}
	hwnd, _, _ := procFindWindowW.Call(uintptr(unsafe.Pointer(class)), 0)
	if hwnd == 0 {
		t.Fatalf("no top-level window of class %s", stopWindowClass)
	}
	var pid uint32
	if _, err := windows.GetWindowThreadProcessId(windows.HWND(hwnd), &pid); err != nil || pid != windows.GetCurrentProcessId() {
		t.Fatalf("the %s window belongs to process %d (%v), not this one", stopWindowClass, pid, err)
	}
	return hwnd
}

func TestWatch_windows(t *testing.T) {
	t.Run("WM_CLOSE cancels the run context", func(t *testing.T) {
		ctx, done, err := Watch(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer done()
		hwnd := findStopWindow(t)
		if r, _, err := procPostMessageW.Call(hwnd, wmClose, 0, 0); r == 0 {
			t.Fatal(err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(10 * time.Second):
			t.Fatal("WM_CLOSE did not cancel the context")
		}
		if cause := context.Cause(ctx); !errors.Is(cause, errWindowClose) {
			t.Errorf("the cause = %v, want %v", cause, errWindowClose)
		}
	})

	t.Run("WM_QUERYENDSESSION agrees and stops nothing; WM_ENDSESSION stops and waits for the close", func(t *testing.T) {
		ctx, done, err := Watch(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer done()
		hwnd := findStopWindow(t)
		if r, _, _ := procSendMessageW.Call(hwnd, wmQueryEndSession, 0, 0); r != 1 {
			t.Errorf("WM_QUERYENDSESSION answered %d, want 1 (the session may end)", r)
		}
		if ctx.Err() != nil {
			t.Fatal("WM_QUERYENDSESSION stopped the agent: the session may still go on")
		}
		answered := make(chan struct{})
		go func() {
			_, _, _ = procSendMessageW.Call(hwnd, wmEndSession, 1, 0)
			close(answered)
		}()
		select {
		case <-ctx.Done():
		case <-time.After(10 * time.Second):
			t.Fatal("WM_ENDSESSION did not cancel the context")
		}
		if cause := context.Cause(ctx); !errors.Is(cause, errEndSession) {
			t.Errorf("the cause = %v, want %v", cause, errEndSession)
		}
		// The agent has not closed yet (done not called): Windows must
		// not be told the process may end.
		select {
		case <-answered:
			t.Fatal("WM_ENDSESSION was answered before the agent closed")
		case <-time.After(300 * time.Millisecond):
		}
		done()
		select {
		case <-answered:
		case <-time.After(endSessionWait + 5*time.Second):
			t.Fatal("WM_ENDSESSION was not answered after the agent closed")
		}
	})
}
