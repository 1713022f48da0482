package printer

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// Config is the printing configuration (cmd maps the profile onto it).
type Config struct {
	// Printers are the profile's printers by alias (case-insensitive).
	Printers map[string]PrinterConfig
	// CUPS is the server of cups printers, raw queue names and Discover.
	CUPS CUPSConfig
	// RawQueues is the backend of a name that is no alias: BackendCUPS (a
	// CUPS queue), BackendWindows (a Windows printer) or "" to accept
	// aliases only.
	RawQueues Backend
	// Clock stamps the files of directory printers; nil means time.Now.
	Clock func() time.Time
}

// PrinterConfig is one printer of a profile.
type PrinterConfig struct {
	Backend Backend
	// Protocol is what the printer is sent: ProtocolPDF ("" too) or
	// ProtocolESCPOS (backends cups, lp, windows, tcp and device).
	Protocol    Protocol
	Queue       string // cups, lp and windows: the queue or Windows printer
	Address     string // tcp: host:port of the printer's raw port (9100 when left out)
	Device      string // device: the device file, e.g. /dev/usb/lp0
	Status      bool   // tcp and device: ask the printer's status (DLE EOT) before and after each job
	Dir         string // dir: the folder of the PDF files
	SumatraPath string // windows: SumatraPDF.exe; "" means FindSumatra's lookup
	LPServer    string // lp: the CUPS server lp talks to; "" means lp's default
	Media       string // media for every job of this printer, e.g. a roll's
	// Copies per CFE type; a type not listed gets DefaultCopies, and 1
	// when that is 0.
	Copies        map[cfe.Type]int
	DefaultCopies int
}

// Manager resolves printer names and runs each printer's jobs one at a
// time. It is safe for concurrent use.
type Manager struct {
	cfg    Config
	cups   *CUPSServer
	byName map[string]target

	mu    sync.Mutex
	locks map[string]chan struct{} // one slot per physical printer
}

// target is a resolved printer: its backend and the key that serializes it.
type target struct {
	key     string
	printer Printer    // nil for printers that take ESC/POS only
	raw     RawPrinter // nil for printers that take PDF only
	conf    PrinterConfig
}

// NewManager checks the configuration. It returns EINVALID naming each bad
// field (printers.<alias>.<field>): an unknown backend, a missing queue or
// folder, copies out of range.
func NewManager(cfg Config) (*Manager, error) {
	m := &Manager{cfg: cfg, cups: NewCUPSServer(cfg.CUPS), byName: map[string]target{},
		locks: map[string]chan struct{}{}}
	var bad []cfe.FieldError
	fail := func(field, format string, args ...any) {
		bad = append(bad, cfe.FieldError{Campo: field, Mensaje: fmt.Sprintf(format, args...)})
	}
	for _, alias := range slices.Sorted(maps.Keys(cfg.Printers)) {
		pc, at := cfg.Printers[alias], "printers."+alias
		switch pc.Backend {
		case BackendCUPS, BackendLP, BackendWindows:
			if strings.TrimSpace(pc.Queue) == "" {
				fail(at+".queue", "indique la cola o el nombre de la impresora")
			}
		case BackendDir:
			if strings.TrimSpace(pc.Dir) == "" {
				fail(at+".dir", "indique la carpeta donde se guardan los PDF")
			}
		case BackendTCP:
			if strings.TrimSpace(pc.Address) == "" {
				fail(at+".address", "indique la dirección de la impresora, como 192.168.1.50:9100")
			}
		case BackendDevice:
			if strings.TrimSpace(pc.Device) == "" {
				fail(at+".device", "indique el dispositivo, como /dev/usb/lp0")
			}
		default:
			fail(at+".backend", "se espera %s, %s, %s, %s, %s o %s", BackendCUPS, BackendLP, BackendDir, BackendWindows,
				BackendTCP, BackendDevice)
		}
		switch pc.Protocol {
		case "", ProtocolPDF:
			if pc.Backend == BackendTCP || pc.Backend == BackendDevice {
				fail(at+".protocol", "el backend %s solo envía %s", pc.Backend, ProtocolESCPOS)
			}
		case ProtocolESCPOS:
			if pc.Backend == BackendDir {
				fail(at+".protocol", "%s se envía con los backends %s, %s, %s, %s o %s", ProtocolESCPOS, BackendTCP,
					BackendDevice, BackendCUPS, BackendLP, BackendWindows)
			}
		default:
			fail(at+".protocol", "se espera %s o %s", ProtocolPDF, ProtocolESCPOS)
		}
		for t, n := range pc.Copies {
			if n < 1 || n > MaxCopies {
				fail(fmt.Sprintf("%s.copies[%d]", at, int(t)), "las copias deben estar entre 1 y %d", MaxCopies)
			}
		}
		if pc.DefaultCopies < 0 || pc.DefaultCopies > MaxCopies {
			fail(at+".default_copies", "debe estar entre 0 (una copia) y %d", MaxCopies)
		}
		m.byName[strings.ToLower(alias)] = m.target(pc)
	}
	switch cfg.RawQueues {
	case "", BackendCUPS, BackendWindows:
	default:
		fail("raw_queues", "se espera %s, %s o nada", BackendCUPS, BackendWindows)
	}
	if len(bad) > 0 {
		return nil, cfe.Invalid("printer.NewManager", bad...)
	}
	return m, nil
}

// target builds the backend of a printer configuration.
func (m *Manager) target(pc PrinterConfig) target {
	t := target{conf: pc, key: string(pc.Backend) + ":" + pc.Queue}
	switch pc.Backend {
	case BackendCUPS:
		c := m.cups.Printer(pc.Queue)
		t.printer, t.raw = c, c
		t.key = "cups:" + pc.Queue // lp and CUPS reach the same queue
	case BackendLP:
		lp := &LP{Server: pc.LPServer, Queue: pc.Queue}
		t.printer, t.raw = lp, lp
		t.key = "cups:" + pc.Queue
	case BackendDir:
		t.printer = &Dir{Path: pc.Dir, Clock: m.cfg.Clock}
		t.key = "dir:" + pc.Dir
	case BackendWindows:
		t.printer = &Sumatra{Exe: pc.SumatraPath, Printer: pc.Queue}
		t.raw = &Spooler{Printer: pc.Queue}
	case BackendTCP:
		t.raw = &TCP{Address: pc.Address, Status: pc.Status}
		t.key = "tcp:" + tcpAddress(pc.Address)
	case BackendDevice:
		t.raw = &Device{Path: pc.Device, Status: pc.Status}
		t.key = "device:" + pc.Device
	}
	if pc.Protocol == ProtocolESCPOS {
		t.printer = nil
	} else {
		t.raw = nil
	}
	return t
}

// resolve finds the printer of a name: an alias, else a raw queue.
func (m *Manager) resolve(name string) (target, error) {
	const op = "printer.Manager"
	name = strings.TrimSpace(name)
	if t, ok := m.byName[strings.ToLower(name)]; ok {
		return t, nil
	}
	if name == "" {
		return target{}, &cfe.Error{Code: cfe.EINVALID, Op: op, Message: "indique la impresora",
			Fields: []cfe.FieldError{{Campo: "impresora", Mensaje: "es obligatoria"}}}
	}
	if m.cfg.RawQueues == "" || !validQueue(name) {
		return target{}, notFound(op, nil, "la impresora «%s» no está configurada", name)
	}
	return m.target(PrinterConfig{Backend: m.cfg.RawQueues, Queue: name}), nil
}

// validQueue accepts printable names without path or control characters.
func validQueue(s string) bool {
	return len(s) <= 127 && !strings.ContainsFunc(s, func(r rune) bool {
		return unicode.IsControl(r) || r == '/' || r == '#'
	})
}

// Print prints the job on the printer called name (an alias, or a raw
// queue when Config.RawQueues allows it), after the jobs already sent to
// the same printer; job.Media defaults to the printer's. Its errors are
// those of Printer.Print, plus ENOTFOUND for an unknown name and
// EUNAVAILABLE when ctx ends while waiting for the printer.
func (m *Manager) Print(ctx context.Context, name string, job Job) (Result, error) {
	t, err := m.resolve(name)
	if err != nil {
		return Result{}, err
	}
	if t.printer == nil {
		return Result{}, cfe.Invalid("printer.Manager.Print", cfe.FieldError{Campo: "impresora",
			Mensaje: fmt.Sprintf("la impresora «%s» recibe %s, no PDF", name, ProtocolESCPOS)})
	}
	if job.Media == "" {
		job.Media = t.conf.Media
	}
	release, err := m.acquire(ctx, "printer.Manager.Print", t.key, name)
	if err != nil {
		return Result{}, err
	}
	defer release()
	return t.printer.Print(ctx, job)
}

// PrintRaw prints a raw job (ESC/POS) on the printer called name, an alias
// whose protocol is escpos, after the jobs already sent to the same
// printer. Its errors are those of RawPrinter.PrintRaw, plus ENOTFOUND for
// an unknown name, EINVALID for a printer that takes PDF, and EUNAVAILABLE
// when ctx ends while waiting for the printer.
func (m *Manager) PrintRaw(ctx context.Context, name string, job RawJob) (Result, error) {
	t, err := m.resolve(name)
	if err != nil {
		return Result{}, err
	}
	if t.raw == nil {
		return Result{}, cfe.Invalid("printer.Manager.PrintRaw", cfe.FieldError{Campo: "impresora",
			Mensaje: fmt.Sprintf("la impresora «%s» recibe PDF, no %s", name, ProtocolESCPOS)})
	}
	release, err := m.acquire(ctx, "printer.Manager.PrintRaw", t.key, name)
	if err != nil {
		return Result{}, err
	}
	defer release()
	return t.raw.PrintRaw(ctx, job)
}

// Protocol is what the printer called name is sent: an alias's protocol,
// else ProtocolPDF.
func (m *Manager) Protocol(name string) Protocol {
	if t, ok := m.byName[strings.ToLower(strings.TrimSpace(name))]; ok && t.conf.Protocol == ProtocolESCPOS {
		return ProtocolESCPOS
	}
	return ProtocolPDF
}

// acquire waits for the printer's slot, or for ctx to end (EUNAVAILABLE).
func (m *Manager) acquire(ctx context.Context, op, key, name string) (release func(), err error) {
	slot := m.slot(key)
	select {
	case slot <- struct{}{}:
		return func() { <-slot }, nil
	case <-ctx.Done():
		return nil, unavailable(op, ctx.Err(), "la impresora «%s» sigue ocupada con otros trabajos", name)
	}
}

// slot returns the semaphore of one physical printer.
func (m *Manager) slot(key string) chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.locks[key]
	if !ok {
		s = make(chan struct{}, 1)
		m.locks[key] = s
	}
	return s
}

// Copies returns how many copies of a CFE of type t the printer called
// name prints: the profile's count for t, else its default, else fallback
// (a request's fallback_copies), else 1.
func (m *Manager) Copies(name string, t cfe.Type, fallback int) int {
	if tg, ok := m.byName[strings.ToLower(strings.TrimSpace(name))]; ok {
		if n, ok := tg.conf.Copies[t]; ok {
			return n
		}
		if tg.conf.DefaultCopies > 0 {
			return tg.conf.DefaultCopies
		}
	}
	if fallback >= 1 && fallback <= MaxCopies {
		return fallback
	}
	return 1
}

// Aliases lists the configured printer aliases, sorted.
func (m *Manager) Aliases() []string { return slices.Sorted(maps.Keys(m.byName)) }

// Discover lists the queues of the CUPS server. It returns EUNAVAILABLE
// when CUPS cannot be reached (as on Windows, where there is none).
func (m *Manager) Discover(ctx context.Context) ([]Queue, error) { return m.cups.Queues(ctx) }
