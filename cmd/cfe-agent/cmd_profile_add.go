package main

import (
	"bufio"
	"cmp"
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/cfe-agent/cfe-agent/app"
	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/printer"
	"github.com/cfe-agent/cfe-agent/profiles"
	"github.com/cfe-agent/cfe-agent/signer"
)

// addFlags are profile add's answers given on the command line.
type addFlags struct {
	ruc, razonSocial, nombreComercial, sucursal, domicilio, ciudad, departamento string
	codigoSucursal                                                               int
	fechaEmisor, resolucion, web, valorUI                                        string
	cert, certPassword                                                           string
	cae                                                                          []string
	impresora                                                                    string
	sinImpresora, activate, nonInteractive, acceptUntrusted                      bool
}

// printerAlias is the alias profile add gives the printer it sets up.
const printerAlias = "caja"

func newProfileAddCommand(opts *app.Options) *cobra.Command {
	var f addFlags
	cmd := &cobra.Command{
		Use:   "add NOMBRE",
		Short: "Crea un perfil de producción preguntando los datos y comprobándolos uno por uno",
		Long: "Crea un perfil de producción: datos de la empresa (RUC con dígito verificador, razón social, " +
			"domicilio…), el certificado de firma y su contraseña (se comprueba que abra, que sea del RUC, que " +
			"esté vigente y su cadena), los archivos CAE de DGI (se comprueban como en «cae import») y la impresora. " +
			"Pregunta lo que no se indique con opciones y vuelve a preguntar ante un dato inválido; con " +
			"--no-interactivo no pregunta nada y falla ante un dato faltante o inválido. Nada se escribe hasta " +
			"que todo es válido: el certificado y los CAE se copian a la carpeta de datos y el perfil se agrega " +
			"a config.yaml sin tocar los demás.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.certPassword == "" {
				f.certPassword = os.Getenv(profiles.EnvPrefix + "CERTIFICATE_PASSWORD")
			}
			return addProfile(cmd, *opts, strings.ToLower(args[0]), f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.ruc, "ruc", "", "`RUC` de la empresa (12 dígitos con dígito verificador)")
	fl.StringVar(&f.razonSocial, "razon-social", "", "`RAZÓN` social registrada en DGI")
	fl.StringVar(&f.nombreComercial, "nombre-comercial", "", "`NOMBRE` comercial de la empresa (opcional)")
	fl.IntVar(&f.codigoSucursal, "codigo-sucursal", 0, "`CÓDIGO` de la casa principal o sucursal que asignó DGI (1 a 9999)")
	fl.StringVar(&f.sucursal, "sucursal", "", "`NOMBRE` de la sucursal (opcional)")
	fl.StringVar(&f.domicilio, "domicilio", "", "`DOMICILIO` fiscal")
	fl.StringVar(&f.ciudad, "ciudad", "", "`CIUDAD` del domicilio fiscal")
	fl.StringVar(&f.departamento, "departamento", "", "`DEPARTAMENTO` del domicilio fiscal")
	fl.StringVar(&f.fechaEmisor, "fecha-emisor", "", "`FECHA` de ingreso al régimen de CFE (AAAA-MM-DD)")
	fl.StringVar(&f.resolucion, "resolucion", "", "`RESOLUCIÓN` de DGI que incorporó a la empresa (número/año), en lugar de la fecha")
	fl.StringVar(&f.web, "web", "", "`DIRECCIÓN` web donde la empresa publica sus e-Tickets (opcional)")
	fl.StringVar(&f.valorUI, "valor-ui", "", "`VALOR` de la UI en pesos al cierre del año anterior (si no se indica: el del perfil activo)")
	fl.StringVar(&f.cert, "certificado", "", "`ARCHIVO` del certificado de firma (.p12 o .pfx)")
	fl.StringVar(&f.certPassword, "clave-certificado", "", "`CONTRASEÑA` del certificado (si no se indica: CFE_AGENT_CERTIFICATE_PASSWORD)")
	fl.StringArrayVar(&f.cae, "cae", nil, "`ARCHIVO` CAE de DGI (.xml); repítalo para varios")
	fl.StringVar(&f.impresora, "impresora", "", "`IMPRESORA` del equipo (cola de CUPS o impresora de Windows) o carpeta donde guardar los PDF")
	fl.BoolVar(&f.sinImpresora, "sin-impresora", false, "crea el perfil sin impresora")
	fl.BoolVar(&f.activate, "usar", false, "activa el perfil nuevo")
	fl.BoolVar(&f.nonInteractive, "no-interactivo", false, "no pregunta: falla si falta un dato o es inválido")
	fl.BoolVar(&f.acceptUntrusted, "aceptar-cadena-no-confiable", false,
		"acepta un certificado cuya cadena no llega a una autoridad acreditada (DGI rechazará lo firmado con él)")
	return cmd
}

// asker asks the technician for each answer on in, writing prompts and
// refusals on out, until the answer passes its check. Without interaction
// the flag's value is the only answer.
type asker struct {
	in          *bufio.Reader
	out         io.Writer
	interactive bool
	terminal    bool // in is a terminal: passwords are read without echo
	fd          int
}

// errCancelled ends profile add when the input ends before every answer.
var errCancelled = errors.New("la entrada terminó antes de completar los datos: no se creó el perfil")

// ask returns the first answer check accepts: given (a flag's value) when
// set, else what the technician types ("" takes def). check returns the
// value to keep, or why it is refused.
func (a *asker) ask(prompt, flag, given, def string, check func(string) (string, error)) (string, error) {
	for {
		v := given
		switch {
		case given != "":
			given = ""
		case !a.interactive && def != "":
			v = def
		case !a.interactive:
			return "", fmt.Errorf("falta --%s: %s", flag, strings.ToLower(prompt[:1])+prompt[1:])
		default:
			line, err := a.line(prompt, def)
			if err != nil {
				return "", err
			}
			v = line
		}
		kept, err := check(v)
		if err == nil {
			return kept, nil
		}
		if !a.interactive {
			return "", fmt.Errorf("--%s: %s", flag, describe(err))
		}
		fmt.Fprintf(a.out, "  ✗ %s\n", describe(err))
	}
}

// line prompts and reads one line ("" takes def).
func (a *asker) line(prompt, def string) (string, error) {
	if def != "" {
		fmt.Fprintf(a.out, "%s [%s]: ", prompt, def)
	} else {
		fmt.Fprintf(a.out, "%s: ", prompt)
	}
	s, err := a.in.ReadString('\n')
	if err != nil && (s == "" || !errors.Is(err, io.EOF)) {
		fmt.Fprintln(a.out)
		return "", errCancelled
	}
	s = strings.TrimSpace(s)
	if s == "" {
		s = def
	}
	return s, nil
}

// secret reads a password: without echo on a terminal.
func (a *asker) secret(prompt string) (string, error) {
	if !a.terminal {
		return a.line(prompt, "")
	}
	fmt.Fprintf(a.out, "%s: ", prompt)
	b, err := term.ReadPassword(a.fd)
	fmt.Fprintln(a.out)
	if err != nil {
		return "", errCancelled
	}
	return string(b), nil
}

// confirm asks a yes/no question (no by default).
func (a *asker) confirm(prompt string) (bool, error) {
	s, err := a.line(prompt+" (s/n)", "n")
	if err != nil {
		return false, err
	}
	return strings.HasPrefix(strings.ToLower(s), "s"), nil
}

// addProfile asks and checks every answer, then copies the certificate and
// the CAE files into the data directory and adds the profile.
func addProfile(cmd *cobra.Command, opts app.Options, name string, f addFlags) error {
	dataDir, cfg, _, err := app.LoadConfig(opts)
	if err != nil {
		return err
	}
	if _, ok := cfg.Profile(name); ok {
		return cfe.Errorf(cfe.ECONFLICT, "ya existe un perfil %q (vea cfe-agent profile list)", name)
	}
	a := &asker{in: bufio.NewReader(cmd.InOrStdin()), out: cmd.OutOrStdout(), interactive: !f.nonInteractive}
	if file, ok := cmd.InOrStdin().(*os.File); ok && term.IsTerminal(int(file.Fd())) {
		a.terminal, a.fd = true, int(file.Fd())
	}
	p := profiles.Profile{Environment: profiles.Produccion}
	w := cmd.OutOrStdout()
	fmt.Fprintf(w, "Perfil de producción %q. Datos de la empresa, como están registrados en DGI:\n", name)
	if err := askCompany(a, &p, f); err != nil {
		return err
	}
	def := ""
	if active, ok := cfg.ActiveProfile(); ok && active.Tax.ValorUI.IsPositive() {
		def = active.Tax.ValorUI.String()
	}
	ui, err := a.ask("Valor de la UI en pesos al cierre del año anterior", "valor-ui", f.valorUI, def, func(s string) (string, error) {
		d, err := decimal.NewFromString(strings.ReplaceAll(s, ",", "."))
		if err != nil || !d.IsPositive() || !d.Equal(d.Truncate(4)) {
			return "", fmt.Errorf("se espera un número mayor que 0 con hasta 4 decimales, como 6.4208")
		}
		return d.String(), nil
	})
	if err != nil {
		return err
	}
	p.Tax.ValorUI = decimal.RequireFromString(ui)

	fmt.Fprintln(w, "Certificado de firma:")
	certBytes, password, err := askCertificate(a, p, f)
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "Archivos CAE de DGI:")
	caes, err := askCAE(a, p, f)
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "Impresora:")
	pr, err := askPrinter(cmd.Context(), a, f)
	if err != nil {
		return err
	}

	// Everything checked: copy the files, then add the profile.
	var written []string
	undo := func() {
		for _, f := range written {
			_ = os.Remove(f)
		}
	}
	write := func(rel string, b []byte) error {
		path := filepath.Join(dataDir, rel)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return err
		}
		if _, err := os.Stat(path); err == nil {
			return cfe.Errorf(cfe.ECONFLICT, "ya existe %s: no se sobrescribe", path)
		}
		if err := os.WriteFile(path, b, 0o600); err != nil {
			return err
		}
		written = append(written, path)
		return nil
	}
	p.Certificate = profiles.Certificate{Path: filepath.Join("certs", name+".p12"), Password: profiles.Secret(password)}
	if err := write(p.Certificate.Path, certBytes); err != nil {
		undo()
		return err
	}
	for _, c := range caes {
		rel := filepath.Join("cae", name, c.file)
		if err := write(rel, c.content); err != nil {
			undo()
			return err
		}
		p.CAE.Files = append(p.CAE.Files, rel)
	}
	if pr != nil {
		p.Printers = map[string]profiles.Printer{printerAlias: *pr}
		p.DefaultPrinter = printerAlias
	}
	if err := profiles.Add(dataDir, name, p, f.activate); err != nil {
		undo()
		return err
	}
	fmt.Fprintf(w, "Perfil %q creado en %s.\n", name, filepath.Join(dataDir, profiles.FileName))
	if f.activate {
		fmt.Fprintln(w, "Es el perfil activo: reinicie el agente para que lo use.")
	} else {
		fmt.Fprintf(w, "Para usarlo: cfe-agent profile use %s\n", name)
	}
	return nil
}

// askCompany asks the company's data, each checked with DGI's rules for the
// emitter (cfe.CheckEmisor) and the printed footer (cfe.CheckFooter).
func askCompany(a *asker, p *profiles.Profile, f addFlags) error {
	c := &p.Company
	// emisor checks one field of the company: DGI's rule for it, whatever
	// the fields not asked yet hold.
	emisor := func(campo string, set func(string)) func(string) (string, error) {
		return func(s string) (string, error) {
			set(s)
			for _, fe := range cfe.CheckEmisor(p.Emisor()) {
				if fe.Campo == campo {
					return "", errors.New(fe.Mensaje)
				}
			}
			return s, nil
		}
	}
	steps := []struct {
		prompt, flag, given, def, campo string
		set                             func(string)
	}{
		{"RUC", "ruc", f.ruc, "", "ruc", func(s string) { c.RUC = s }},
		{"Razón social", "razon-social", f.razonSocial, "", "razonSocial", func(s string) { c.RazonSocial = s }},
		{"Nombre comercial (opcional, «-» para ninguno)", "nombre-comercial", f.nombreComercial, "-", "nombreComercial",
			func(s string) { c.NombreComercial = strings.TrimPrefix(s, "-") }},
		{"Código de sucursal de DGI (1 para la casa principal)", "codigo-sucursal", itoaOrEmpty(f.codigoSucursal), "1",
			"codigoSucursal", func(s string) { c.CdgDGISucur, _ = strconv.Atoi(s) }},
		{"Nombre de la sucursal (opcional, «-» para ninguno)", "sucursal", f.sucursal, "-", "sucursal",
			func(s string) { c.Sucursal = strings.TrimPrefix(s, "-") }},
		{"Domicilio fiscal", "domicilio", f.domicilio, "", "domicilioFiscal", func(s string) { c.DomicilioFiscal = s }},
		{"Ciudad", "ciudad", f.ciudad, "", "ciudad", func(s string) { c.Ciudad = s }},
		{"Departamento", "departamento", f.departamento, "", "departamento", func(s string) { c.Departamento = s }},
	}
	for _, st := range steps {
		if _, err := a.ask(st.prompt, st.flag, st.given, st.def, emisor(st.campo, st.set)); err != nil {
			return err
		}
	}
	// The footer: the date of entry to the regime, or the resolution.
	if f.fechaEmisor != "" && f.resolucion != "" {
		return errors.New("indique --fecha-emisor o --resolucion, no ambas: quien ingresó por resolución imprime solo la resolución")
	}
	footer := func(campo string, set func(string) error) func(string) (string, error) {
		return func(s string) (string, error) {
			if err := set(s); err != nil {
				return "", err
			}
			for _, fe := range cfe.CheckFooter(c.FechaEmisor.Date, c.Resolucion, c.WebURL) {
				if fe.Campo == campo {
					return "", errors.New(fe.Mensaje)
				}
			}
			return s, nil
		}
	}
	if f.resolucion == "" {
		if _, err := a.ask("Fecha de ingreso al régimen de CFE (AAAA-MM-DD; «-» si ingresó por resolución)", "fecha-emisor",
			f.fechaEmisor, "", footer("fechaEmisor", func(s string) error {
				c.FechaEmisor = profiles.Date{}
				if s == "-" {
					return nil
				}
				t, err := time.Parse(time.DateOnly, s)
				if err != nil {
					return errors.New("se espera una fecha AAAA-MM-DD, como 2020-03-01")
				}
				c.FechaEmisor = profiles.Date{Date: cfe.DateOf(t)}
				return nil
			})); err != nil {
			return err
		}
	}
	if c.FechaEmisor.IsZero() {
		if _, err := a.ask("Resolución de DGI (número/año)", "resolucion", f.resolucion, "",
			footer("resolucion", func(s string) error { c.Resolucion = s; return nil })); err != nil {
			return err
		}
	}
	_, err := a.ask("Web donde publica sus e-Tickets (opcional, «-» para ninguna)", "web", f.web, "-",
		footer("webUrl", func(s string) error { c.WebURL = strings.TrimPrefix(s, "-"); return nil }))
	return err
}

func itoaOrEmpty(n int) string {
	if n == 0 {
		return ""
	}
	return strconv.Itoa(n)
}

// askCertificate asks the certificate file and its password until they open
// and the certificate can sign for the company: valid today, of its RUC, not
// a test one, and issued by an accredited CA (or accepted without one).
func askCertificate(a *asker, p profiles.Profile, f addFlags) (content []byte, password string, err error) {
	for {
		_, err = a.ask("Archivo del certificado (.p12 o .pfx)", "certificado", f.cert, "", func(s string) (string, error) {
			if ext := strings.ToLower(filepath.Ext(s)); ext != ".p12" && ext != ".pfx" {
				return "", errors.New("se espera un archivo .p12 o .pfx")
			}
			b, err := os.ReadFile(s)
			switch {
			case errors.Is(err, fs.ErrNotExist):
				return "", fmt.Errorf("el archivo %s no existe", s)
			case err != nil:
				return "", fmt.Errorf("no se puede leer %s: %s", s, osReason(err))
			}
			content = b
			return s, nil
		})
		if err != nil {
			return nil, "", err
		}
		f.cert = ""
		var creds *signer.Credentials
		password, err = a.askPassword(f.certPassword, func(pw string) error {
			creds, err = signer.LoadPKCS12(content, pw)
			return err
		})
		f.certPassword = ""
		if err != nil {
			if errors.Is(err, errWrongFile) && a.interactive {
				continue
			}
			return nil, "", err
		}
		problem, untrusted := certificateProblem(creds, p, time.Now())
		if problem == "" {
			fmt.Fprintf(a.out, "  ✓ %s\n", certSummary(creds.Certificate))
			return content, password, nil
		}
		if untrusted {
			fmt.Fprintf(a.out, "  ! %s: DGI rechazará los comprobantes firmados con él\n", problem)
			ok := f.acceptUntrusted
			if !ok && a.interactive {
				if ok, err = a.confirm("¿Usar este certificado igual?"); err != nil {
					return nil, "", err
				}
			}
			if ok {
				return content, password, nil
			}
			if !a.interactive {
				return nil, "", fmt.Errorf("--certificado: %s (use --aceptar-cadena-no-confiable para aceptarlo)", problem)
			}
			continue
		}
		if !a.interactive {
			return nil, "", fmt.Errorf("--certificado: %s", problem)
		}
		fmt.Fprintf(a.out, "  ✗ %s\n", problem)
	}
}

// errWrongFile is askPassword's error when the file, not the password, is
// at fault: another file is asked.
var errWrongFile = errors.New("wrong certificate file")

// askPassword asks the password until open accepts it; a file that is no
// PKCS#12 at all ends the questions with errWrongFile.
func (a *asker) askPassword(given string, open func(string) error) (string, error) {
	for {
		pw := given
		if given == "" {
			if !a.interactive {
				return "", errors.New("falta --clave-certificado (o CFE_AGENT_CERTIFICATE_PASSWORD): la contraseña del certificado")
			}
			var err error
			if pw, err = a.secret("Contraseña del certificado"); err != nil {
				return "", err
			}
		}
		given = ""
		err := open(pw)
		switch {
		case err == nil:
			return pw, nil
		case !errors.Is(err, signer.ErrWrongPassword):
			if !a.interactive {
				return "", fmt.Errorf("--certificado: %s", describe(err))
			}
			fmt.Fprintf(a.out, "  ✗ %s\n", describe(err))
			return "", errWrongFile
		case !a.interactive:
			return "", errors.New("--clave-certificado: la contraseña del certificado es incorrecta")
		}
		fmt.Fprintln(a.out, "  ✗ la contraseña del certificado es incorrecta")
	}
}

// certificateProblem says why creds cannot sign for p's company, or ""; an
// untrusted chain is reported with untrusted set (it may be accepted).
func certificateProblem(creds *signer.Credentials, p profiles.Profile, now time.Time) (problem string, untrusted bool) {
	i := signer.CertInfo(creds.Certificate, now)
	switch {
	case i.Expired:
		return fmt.Sprintf("el certificado venció el %s", i.NotAfter.In(cfe.Montevideo).Format(time.DateOnly)), false
	case i.NotYetValid:
		return fmt.Sprintf("el certificado recién es válido desde el %s", i.NotBefore.In(cfe.Montevideo).Format(time.DateOnly)), false
	case i.RUC != p.Company.RUC:
		return fmt.Sprintf("el certificado es del RUC %s, no del %s", cmp.Or(i.RUC, "(ninguno)"), p.Company.RUC), false
	case i.Test:
		return "es un certificado de prueba, sin valor fiscal: no sirve para producción", false
	}
	trust, err := embeddedTrust()
	if err == nil {
		_, err = trust.Chain(creds.Certificate, creds.Chain, now)
	}
	if err != nil {
		return cfe.ErrorMessage(err), true
	}
	return "", false
}

func certSummary(c *x509.Certificate) string {
	i := signer.CertInfo(c, time.Now())
	return fmt.Sprintf("%s, RUC %s, vence el %s", i.CommonName, i.RUC, i.NotAfter.In(cfe.Montevideo).Format(time.DateOnly))
}

// caeFile is a checked CAE file and the name it gets in the data directory.
type caeFile struct {
	file    string
	content []byte
}

// askCAE asks DGI's CAE files, one per answer, each checked as cae import
// checks it (DGI's signature, the company's RUC, not expired), until an
// empty answer.
func askCAE(a *asker, p profiles.Profile, f addFlags) ([]caeFile, error) {
	var out []caeFile
	today := cfe.DateOf(time.Now().In(cfe.Montevideo))
	check := func(s string) (string, error) {
		if s == "-" {
			return s, nil
		}
		b, err := os.ReadFile(s)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return "", fmt.Errorf("el archivo %s no existe", s)
		case err != nil:
			return "", fmt.Errorf("no se puede leer %s: %s", s, osReason(err))
		}
		r, err := signer.ParseCAEFile(b, signer.CAEOptions{RUC: p.Company.RUC, Today: today})
		if err != nil {
			return "", fmt.Errorf("%s: %s", filepath.Base(s), describe(err))
		}
		base := filepath.Base(s)
		if slices.ContainsFunc(out, func(c caeFile) bool { return c.file == base }) {
			return "", fmt.Errorf("ya se indicó un archivo %s", base)
		}
		out = append(out, caeFile{file: base, content: b})
		fmt.Fprintf(a.out, "  ✓ %s serie %s, números %d a %d, vence %s\n", r.Type.Name(), r.Serie, r.DNro, r.HNro, r.Vencimiento)
		return s, nil
	}
	for _, given := range f.cae {
		if _, err := a.ask("Archivo CAE", "cae", given, "", check); err != nil {
			return nil, err
		}
	}
	if !a.interactive {
		return out, nil
	}
	for {
		s, err := a.ask("Archivo CAE de DGI (.xml; «-» para terminar)", "cae", "", "-", check)
		if err != nil {
			return nil, err
		}
		if s == "-" {
			if len(out) == 0 {
				fmt.Fprintln(a.out, "  ! sin archivos CAE el perfil no puede firmar: impórtelos luego con «cfe-agent cae import»")
			}
			return out, nil
		}
	}
}

// askPrinter asks the printer: one of the machine's (CUPS queues, Windows
// printers), listed with their state, or a folder where the PDFs are saved.
func askPrinter(ctx context.Context, a *asker, f addFlags) (*profiles.Printer, error) {
	if f.sinImpresora {
		return nil, nil
	}
	raw, backend := printer.BackendCUPS, profiles.BackendCUPS
	if runtime.GOOS == "windows" {
		raw, backend = printer.BackendWindows, profiles.BackendWindows
	}
	var system []printer.SystemPrinter
	m, err := printer.NewManager(printer.Config{RawQueues: raw})
	if err == nil {
		lctx, cancel := context.WithTimeout(ctx, app.SystemPrintersTimeout)
		_, system, err = m.SystemPrinters(lctx)
		cancel()
	}
	switch {
	case err != nil:
		fmt.Fprintf(a.out, "  ! no se pudieron listar las impresoras del equipo: %s\n", describe(err))
	case len(system) == 0:
		fmt.Fprintln(a.out, "  (el equipo no tiene impresoras instaladas)")
	default:
		for _, sp := range system {
			state := printerStates[sp.State]
			if sp.Reason != "" {
				state += ": " + sp.Reason
			}
			fmt.Fprintf(a.out, "  - %s (%s)\n", sp.Name, state)
		}
	}
	var pr *profiles.Printer
	_, err = a.ask("Impresora (una de las listadas, una carpeta para guardar los PDF, o «-» para ninguna)", "impresora",
		f.impresora, "", func(s string) (string, error) {
			switch {
			case s == "-":
				pr = nil
			case filepath.IsAbs(s) && (len(system) == 0 || !slices.ContainsFunc(system, func(sp printer.SystemPrinter) bool { return sp.Name == s })):
				if err := writableDir(s); err != nil {
					return "", fmt.Errorf("no se puede escribir en la carpeta %s: %w", s, err)
				}
				pr = &profiles.Printer{Backend: profiles.BackendDir, Dir: s}
			case slices.ContainsFunc(system, func(sp printer.SystemPrinter) bool { return sp.Name == s }):
				pr = &profiles.Printer{Backend: backend, Queue: s}
			default:
				return "", fmt.Errorf("el equipo no tiene una impresora «%s»: elija una de la lista o una carpeta (ruta completa)", s)
			}
			return s, nil
		})
	return pr, err
}
