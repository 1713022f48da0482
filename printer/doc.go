// Package printer sends printed representations (PDF) to printers.
//
// It owns the backends — CUPS over IPP, the lp command as a fallback, a
// directory that receives PDF files, and SumatraPDF on Windows — and the
// Manager that maps a profile's printer aliases (or a raw CUPS queue name)
// to a backend, serializes the jobs of each printer, and lists the machine's
// printers with their state (CUPS queues, or the Windows spooler's printers:
// SystemPrinters). Configuration arrives as plain structs (Config);
// the printer's own reason for a refused or failed job reaches the caller
// in Spanish.
package printer
