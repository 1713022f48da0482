// Command cfe-agent is the point-of-sale agent: it signs CFEs offline, serves
// the local REST module, prints, and delivers receipts to the hosted service.
//
// main only sets up signal handling, runs the command tree and maps its error
// to an exit status; the commands live beside it, the wiring in agent.go.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	_ "time/tzdata" // zone rules even on machines without a zoneinfo database

	"github.com/cfe-agent/cfe-agent/cfe"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := executeRoot(ctx, newRootCommand()) // under the Windows service manager too (cmd_service_windows.go)
	stop()
	if err != nil {
		var failed errChecksFailed
		if !errors.As(err, &failed) {
			fmt.Fprintln(os.Stderr, "cfe-agent:", cfe.Describe(err))
		}
		os.Exit(1)
	}
}

// errChecksFailed is returned by commands that already printed one line per
// failed check (verify, doctor): main exits 1 without printing more.
type errChecksFailed struct{ n int }

func (e errChecksFailed) Error() string { return fmt.Sprintf("%d comprobaciones fallaron", e.n) }
