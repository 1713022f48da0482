package main

import (
	"os"

	"github.com/cfe-agent/cfe-agent/internal/console"
)

// The Windows agent is a GUI-subsystem program: a command that prints
// (consoleWanted) writes to the console of the shell that started it, and
// the bare start of the agent (the tray) stays off it (internal/console says
// how). It is set up before anything is written.
func init() { console.Setup(consoleWanted(os.Args[1:])) }
