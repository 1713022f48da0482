package apitype

// Printer states of the listing.
const (
	PrinterIdle     = "idle"
	PrinterPrinting = "printing"
	PrinterStopped  = "stopped"
	PrinterNotFound = "not_found"
)

// PrintersReport is the body of GET /printers.
type PrintersReport struct {
	OK      bool   `json:"ok"` // always true: a failure is answered with the error shape
	Profile string `json:"profile"`
	// Aliases are the profile's printers, sorted by name.
	Aliases []PrinterAlias `json:"aliases"`
	System  SystemPrinters `json:"system"`
}

// PrinterAlias is one printer of the profile.
type PrinterAlias struct {
	Name    string `json:"name"`    // the alias, as POST /pdf's impresora takes it
	Backend string `json:"backend"` // cups, lp, dir, windows…
	// Target is where the alias prints: a CUPS queue, a Windows printer or
	// a folder.
	Target   string `json:"target"`
	Protocol string `json:"protocol"` // what the printer is sent: pdf (or escpos)
	Default  bool   `json:"default"`  // the profile's default printer
	// State is the state of the system printer the alias prints on (idle,
	// printing, stopped), "not_found" when the spooler answered without it,
	// and absent when it cannot be told (a folder, or the spooler did not
	// answer).
	State  string `json:"state,omitempty"`
	Reason string `json:"reason,omitempty"` // the spooler's reason, with State
	// LastCheck is what the agent last learned of the printer (its check
	// between jobs, or its last job); absent when it knows nothing yet.
	LastCheck *PrinterCheck `json:"last_check,omitempty"`
}

// SystemPrinters are the machine's printers, as its spooler reports them.
type SystemPrinters struct {
	// Source is the spooler asked: "cups" (Linux, macOS) or "windows".
	Source   string          `json:"source"`
	Printers []SystemPrinter `json:"printers"`
	// Error says, in Spanish, why the spooler could not be asked; the list
	// is then empty.
	Error string `json:"error,omitempty"`
}

// SystemPrinter is one printer of the machine's spooler.
type SystemPrinter struct {
	Name        string `json:"name"` // a CUPS queue or a Windows printer: POST /pdf takes it as impresora
	Description string `json:"description"`
	Location    string `json:"location"`
	Model       string `json:"model"`
	// State is "idle", "printing" or "stopped".
	State string `json:"state"`
	// Reason is the spooler's explanation of the state ("Sin papel",
	// "paused", "sin papel, tapa abierta"); "" when there is none.
	Reason        string `json:"reason"`
	AcceptingJobs bool   `json:"accepting_jobs"`
	Default       bool   `json:"default"` // the spooler's default printer
}
