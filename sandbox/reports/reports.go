package reports

import (
	"cmp"
	"log/slog"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/sandbox/data"
	"github.com/cfe-agent/cfe-agent/sandbox/issuing"
)

// CFEs are the issued CFEs a report reads (issuing.Issued).
type CFEs interface {
	// Select calls fn for each CFE f selects, in id order.
	Select(f issuing.Filter, fn func(*data.CFERecord) error) error
}

// Printer renders a CFE's printed representation (issuing.Printer).
type Printer interface {
	// Render makes the PDF of rec with template (the company's when empty):
	// EINVALID for an unknown template, EINTERNAL when rendering fails.
	Render(rec *data.CFERecord, company *data.Company, template string) ([]byte, error)
}

// Config configures the reports room.
type Config struct {
	DB      *data.DB
	CFEs    CFEs
	Printer Printer
	Now     func() time.Time
	Log     *slog.Logger

	MaxExportRows int // CFEs of one Excel or accounting export; maxExportRows when zero
	MaxZipPDFs    int // CFEs of one descargarPdfsFiltrados; maxZipPDFs when zero
}

// Service is the reports room.
type Service struct {
	Charts  *Charts
	Exports *Exports
	PDFZip  *PDFZip
}

// New builds the room.
func New(cfg Config) *Service {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Service{
		Charts: &Charts{cfes: cfg.CFEs, now: cfg.Now, log: cfg.Log},
		Exports: &Exports{db: cfg.DB, cfes: cfg.CFEs, now: cfg.Now, log: cfg.Log,
			maxRows: cmp.Or(max(cfg.MaxExportRows, 0), maxExportRows)},
		PDFZip: &PDFZip{db: cfg.DB, cfes: cfg.CFEs, printer: cfg.Printer, log: cfg.Log,
			max: cmp.Or(max(cfg.MaxZipPDFs, 0), maxZipPDFs)},
	}
}

// companyOf reads a company.
func companyOf(db *data.DB, id int64) (*data.Company, error) {
	var c *data.Company
	err := db.View(func(tx *bolt.Tx) error {
		var err error
		c, err = data.GetCompany(tx, id)
		return err
	})
	return c, err
}
