package cfe

import (
	"fmt"
	"strings"
)

// Describe renders an error for a terminal (the technician's command line,
// the Windows Event Log): the user message, each field error on a line of
// its own when there are several, and the whole chain of an internal error,
// which has no user message to show.
func Describe(err error) string {
	msg := ErrorMessage(err)
	if ErrorCode(err) == EINTERNAL {
		return err.Error()
	}
	fields := ErrorFields(err)
	if len(fields) > 1 {
		var b strings.Builder
		b.WriteString(msg)
		for _, f := range fields {
			fmt.Fprintf(&b, "\n  %s: %s", f.Campo, f.Mensaje)
		}
		return b.String()
	}
	return msg
}
