package tray

import (
	"errors"
	"testing"
)

// TestDialogAnswer: zenity's and kdialog's exit statuses; only 0 quits, and
// a dialog that could not ask (a timeout, a crash) keeps the agent.
func TestDialogAnswer(t *testing.T) {
	t.Parallel()
	for code, want := range map[int]bool{0: true, 1: false, 2: false} {
		if yes, err := dialogAnswer(code); yes != want || err != nil {
			t.Errorf("dialogAnswer(%d) = %v, %v; want %v", code, yes, err, want)
		}
	}
	for _, code := range []int{5, 255, -1} {
		if yes, err := dialogAnswer(code); yes || err == nil {
			t.Errorf("dialogAnswer(%d) = %v, %v; want no and an error", code, yes, err)
		}
	}
}

// TestMessageBoxAnswer: MessageBoxW's return values. Only IDYES quits; a
// failed call (0) is an error and the agent stays; IDNO and anything else
// keep it. No is the default button.
func TestMessageBoxAnswer(t *testing.T) {
	t.Parallel()
	if yes, err := messageBoxAnswer(idYes, nil); !yes || err != nil {
		t.Errorf("IDYES: %v, %v", yes, err)
	}
	for _, ret := range []int32{idNo, 2 /* IDCANCEL */, 3} {
		if yes, err := messageBoxAnswer(ret, nil); yes || err != nil {
			t.Errorf("%d: %v, %v; want no", ret, yes, err)
		}
	}
	cause := errors.New("ERROR_NOT_ENOUGH_MEMORY")
	if yes, err := messageBoxAnswer(0, cause); yes || !errors.Is(err, cause) {
		t.Errorf("0: %v, %v; want no and the call's error", yes, err)
	}
	if yes, err := messageBoxAnswer(0, nil); yes || err == nil {
		t.Errorf("0 without an error: %v, %v", yes, err)
	}
	if messageBoxFlags&0xf != mbYesNo || messageBoxFlags&0xf00 != mbDefButton2 {
		t.Errorf("flags %#x: want Sí/No with No as the default", messageBoxFlags)
	}
}
