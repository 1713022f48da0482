package sandbox

import (
	"fmt"
	"time"
)

// Choices the interface leaves open ("not shown"). Each is described in
// docs/sandbox.md; change them here and only here.

// Environments and their API key prefixes (interface §5.2 rule 2).
const (
	EnvSandbox    = "sandbox"
	EnvProduccion = "produccion"

	prefixTest = "xx_test_"
	prefixLive = "xx_live_"

	// userKeyPrefix marks a user API key (usable only as a login secret). It
	// is deliberately not an environment prefix, so it is never taken for a
	// company key.
	userKeyPrefix = "xx_usr_"
)

// Sessions.
const (
	jwtTTL           = 6 * time.Hour       // interface §5.1
	refreshTTL       = 30 * 24 * time.Hour // lifetime of a refresh token
	tempPasswordTTL  = 30 * time.Minute    // password recovery: a single-use temporary password
	secretBytes      = 32                  // random bytes in keys, refresh tokens and temporary passwords
	recoveryCooldown = time.Minute         // at most one recovery mail per user in this time
)

// jwtRole is the rol claim of every JWT: the real service names the user's
// role there ("Supervisor de empresa"); the sandbox has one role.
const jwtRole = "Supervisor de empresa"

// maxRotated caps the exchanged refresh tokens a session remembers to
// recognize their reuse (one a day for a month, with room to spare).
const maxRotated = 64

// passwordCost is the bcrypt cost of stored passwords.
const passwordCost = 10

// Company API key rate limits used when neither the key nor its company sets
// one (interface §8.2: numeric defaults not shown).
const (
	defaultKeyPerMinute = 120
	defaultKeyPerHour   = 3600
	maxKeyLimit         = 1_000_000
)

// LoginLimits are the login-protection thresholds (interface §8.3). A window
// is a sliding window over failures.
type LoginLimits struct {
	Window time.Duration
	// PerIP and PerPrefix: failures from one address, or from one IPv4 /24 or
	// IPv6 /64, after which further attempts from it get 429.
	PerIP     int
	PerPrefix int
	// AlertFailures failures against one normalized identifier, coming from at
	// least AlertNetworks distinct prefixes, raise an alert. They never block.
	AlertFailures int
	AlertNetworks int
}

// check refuses limits that would disable the protection by accident.
func (l LoginLimits) check() error {
	if l.Window <= 0 || l.PerIP < 1 || l.PerPrefix < 1 || l.AlertFailures < 1 || l.AlertNetworks < 1 {
		return fmt.Errorf("sandbox: login limits need a positive window and thresholds of at least 1 (got %+v)", l)
	}
	return nil
}

// DefaultLoginLimits are the thresholds used when Config.LoginLimits is zero.
var DefaultLoginLimits = LoginLimits{
	Window:        15 * time.Minute,
	PerIP:         10,
	PerPrefix:     30,
	AlertFailures: 20,
	AlertNetworks: 3,
}

// DefaultListen is the address the sandbox listens on when Config.Listen is empty.
const DefaultListen = "127.0.0.1:18788"

// HTTP, mail and files.
const (
	maxBodyBytes    = 1 << 20 // request bodies larger than this are refused
	headerRequestID = "X-Request-Id"
	mailFrom        = "no-responder@sandbox.invalid"
	mailTimeout     = 10 * time.Second
	shutdownTimeout = 5 * time.Second
	dbOpenTimeout   = 2 * time.Second
)

// Demo data created on first run. The demo company's footer data are the
// test values of the agent's embedded default profile (profiles/default.yaml),
// which names the same company, so its PDFs print the whole footer.
const (
	demoUsername    = "demo"
	demoEmail       = "demo@sandbox.invalid"
	demoRUC         = "219999830019" // DGI's test RUC
	demoRazonSocial = "Empresa de Prueba S.A."
	demoFechaEmisor = "2012-10-01"
	demoWebURL      = "https://www.ejemplo.com.uy/comprobantes"
)

// What a new company gets when its seed or command does not say: its
// FormatoRepImpresa (interface §4.3.1), its address as the emitter of its
// CFEs, its branch code at DGI and the terminal code of its issuing point.
const (
	defaultFormato      = "Estandar"
	defaultDomFiscal    = "Av. 18 de Julio 1000"
	defaultCiudad       = "Montevideo"
	defaultDepartamento = "Montevideo"
	defaultSucursal     = 1
	defaultTerminal     = "T001"
)

// hostedSerie is the serie of the CAE ranges the sandbox signs with. It is
// not "A", the serie of the ranges local agents generate for testing, so the
// numbers of the CFEs they deliver never collide with the sandbox's own.
const hostedSerie = "H"

// Exports and e-mail of issued CFEs (exportarExcel, exportarSistemaContable,
// enviarPdfPorCorreo).
const (
	maxExportRows     = 10_000 // CFEs one Excel or accounting export may hold
	maxMailRecipients = 10     // addresses one enviarPdfPorCorreo may name
	maxMailSubject    = 200    // characters of a subject
	maxMailMessage    = 4000   // characters of a message's text
)

// Printed representations by id, zips of PDFs, previews and re-applied
// collections (pdfexport.go, preview.go, reapply.go).
const (
	// maxZipPDFs bounds the CFEs of one descargarPdfsFiltrados: at about
	// 35 kB and 6 to 40 ms a PDF (BenchmarkPDFZip, BenchmarkRender*), a zip
	// of at most some 17 MB, sent in well under a minute.
	maxZipPDFs = 500
	// headerCFECount tells how many PDFs a zip holds.
	headerCFECount = "X-Cantidad-CFE"
	// previewTTL is how long a preview's token serves its PDF: long enough
	// to open it from a link in the same screen, short enough not to keep
	// drafts around.
	previewTTL = 10 * time.Minute
	// maxPreviews bounds the previews kept in memory (a PDF each, about
	// 40 kB): at most some 20 MB.
	maxPreviews = 512
	// maxCompanyPreviews bounds one company's share of them, so that one
	// company's previews never push out another's before they expire.
	maxCompanyPreviews = 32
	// razonReaplicacion is RazonRef (optional, printed) of the references
	// of a re-applied collection.
	razonReaplicacion = "Reaplicación de cobranza"
)
