package sandbox

import "time"

// Choices the interface leaves open ("not shown") about the service as a
// whole; each room keeps its own in its policy.go. Each is described in
// docs/sandbox.md; change them here and only here.

// DefaultListen is the address the sandbox listens on when Config.Listen is empty.
const DefaultListen = "127.0.0.1:18788"

// shutdownTimeout bounds the wait for requests in flight at Close.
const shutdownTimeout = 5 * time.Second

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
// CFEs and the terminal code of its issuing point (its branch code at DGI is
// data.Sucursal).
const (
	defaultFormato      = "Estandar"
	defaultDomFiscal    = "Av. 18 de Julio 1000"
	defaultCiudad       = "Montevideo"
	defaultDepartamento = "Montevideo"
	defaultTerminal     = "T001"
)
