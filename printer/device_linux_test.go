package printer

import (
	"bytes"
	"context"
	"os"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/internal/testtool/thermal"
)

// openPTY returns the master of a new pseudo-terminal and its slave's path:
// the slave stands for a serial printer's port, the master for the printer.
func openPTY(t *testing.T) (*os.File, string) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		testtool.Unavailable(t, "no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { master.Close() })
	fd := int(master.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	return master, "/dev/pts/" + strconv.Itoa(n)
}

// TestDevice_PrintRawSerialStatus prints on a serial port (a
// pseudo-terminal) whose printer answers DLE EOT: the port is put in raw
// mode, so the bytes arrive untranslated, and paper end is refused before
// anything is sent.
func TestDevice_PrintRawSerialStatus(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		printer *thermal.Printer
		reason  string
	}{
		{name: "ready"},
		{name: "paper end", printer: &thermal.Printer{PaperEnd: true}, reason: "no tiene papel"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			master, slave := openPTY(t)
			// Keep the slave open, so that reading the master waits for
			// data instead of failing while no one has the port open.
			hold, err := os.OpenFile(slave, os.O_RDWR|unix.O_NOCTTY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer hold.Close()
			f := tc.printer
			if f == nil {
				f = &thermal.Printer{}
			}
			go f.Serve(master)
			_, err = (&Device{Path: slave, Status: true}).PrintRaw(context.Background(), RawJob{Data: receiptBytes})
			if tc.reason != "" {
				if cfe.ErrorCode(err) != cfe.EUNAVAILABLE || !strings.Contains(cfe.ErrorMessage(err), tc.reason) {
					t.Fatalf("error %v, want EUNAVAILABLE saying %q", err, tc.reason)
				}
				if got := f.Received(); len(got) != 0 {
					t.Errorf("a printer without paper received %q", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("PrintRaw: %v", err)
			}
			// The receipt's "\n" must not become "\r\n" on the way.
			waitFor(t, "the receipt", func() bool { return len(f.Received()) >= len(receiptBytes) })
			if got := f.Received(); !bytes.Equal(got, receiptBytes) {
				t.Errorf("printer received %q, want %q", got, receiptBytes)
			}
		})
	}
}
