package printer

// Spooler prints raw jobs (ESC/POS) through the Windows spooler with the RAW
// datatype, which passes them to the printer's port untouched, whatever
// its driver. Elsewhere PrintRaw returns ENOTFOUND.
type Spooler struct {
	Printer string // the Windows printer's name
}
