package tray

import (
	"errors"
	"fmt"
)

// The question "Salir" asks before the agent closes (Config.Confirm): a
// cashier who closes the agent by mistake cannot sign a sale until someone
// opens it again.
const (
	quitTitle    = "Agente CFE"
	quitQuestion = "¿Cerrar el agente?"
	quitDetail   = "No se podrán firmar ventas hasta que vuelva a abrirlo."
	quitYes      = "Sí"
	quitNo       = "No"
)

// dialogAnswer reads the exit status of a question asked with zenity
// --question or kdialog --warningyesno: 0 is yes; 1 (no, or the window
// closed) and kdialog's 2 (cancel) are no; anything else — zenity's 5
// (timeout), a crash, a missing display — is an error, and the agent stays.
func dialogAnswer(code int) (bool, error) {
	switch code {
	case 0:
		return true, nil
	case 1, 2:
		return false, nil
	}
	return false, fmt.Errorf("the question dialog exited with status %d", code)
}

// MessageBoxW's flags and answers (winuser.h). The question has Sí and No
// (MB_YESNO), No is the default button (MB_DEFBUTTON2: Enter pressed by
// mistake keeps the agent), a warning icon, and it comes to the front
// (MB_SETFOREGROUND, MB_TOPMOST): the tray's menu has closed when it shows.
const (
	mbYesNo         = 0x00000004
	mbIconWarning   = 0x00000030
	mbDefButton2    = 0x00000100
	mbSetForeground = 0x00010000
	mbTopmost       = 0x00040000

	idYes = 6
	idNo  = 7

	messageBoxFlags = mbYesNo | mbIconWarning | mbDefButton2 | mbSetForeground | mbTopmost
)

// messageBoxAnswer reads MessageBoxW's return value: IDYES is yes, IDNO is
// no; 0 is the call's failure (err), anything else (the box closed some
// other way) is no.
func messageBoxAnswer(ret int32, err error) (bool, error) {
	switch ret {
	case idYes:
		return true, nil
	case 0:
		if err == nil {
			err = errors.New("MessageBoxW failed")
		}
		return false, fmt.Errorf("question box: %w", err)
	}
	return false, nil
}
