package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/cfe-agent/cfe-agent/app"
	"github.com/cfe-agent/cfe-agent/internal/profilesetup"
	"github.com/cfe-agent/cfe-agent/profiles"
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

// addProfile asks every answer, each checked by profilesetup as it comes,
// then has it copy the certificate and the CAE files into the data
// directory and add the profile.
func addProfile(cmd *cobra.Command, opts app.Options, name string, f addFlags) error {
	dataDir, cfg, _, err := app.LoadConfig(opts)
	if err != nil {
		return err
	}
	d, err := profilesetup.New(cfg, profilesetup.Config{Name: name, Trust: embeddedTrust})
	if err != nil {
		return err
	}
	a := &asker{in: bufio.NewReader(cmd.InOrStdin()), out: cmd.OutOrStdout(), interactive: !f.nonInteractive}
	if file, ok := cmd.InOrStdin().(*os.File); ok && term.IsTerminal(int(file.Fd())) {
		a.terminal, a.fd = true, int(file.Fd())
	}
	w := cmd.OutOrStdout()
	fmt.Fprintf(w, "Perfil de producción %q. Datos de la empresa, como están registrados en DGI:\n", d.Name())
	if err := askCompany(a, d, f); err != nil {
		return err
	}
	if _, err := a.ask("Valor de la UI en pesos al cierre del año anterior", "valor-ui", f.valorUI, d.DefaultValorUI(),
		keep(d.SetValorUI)); err != nil {
		return err
	}
	fmt.Fprintln(w, "Certificado de firma:")
	if err := askCertificate(a, d, f); err != nil {
		return err
	}
	fmt.Fprintln(w, "Archivos CAE de DGI:")
	if err := askCAE(a, d, f); err != nil {
		return err
	}
	fmt.Fprintln(w, "Impresora:")
	if err := askPrinter(cmd.Context(), a, d, f); err != nil {
		return err
	}
	path, err := d.Create(dataDir, f.activate)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "Perfil %q creado en %s.\n", d.Name(), path)
	if f.activate {
		fmt.Fprintln(w, "Es el perfil activo: reinicie el agente para que lo use.")
	} else {
		fmt.Fprintf(w, "Para usarlo: cfe-agent profile use %s\n", d.Name())
	}
	return nil
}

// keep is an answer's check from one of the draft's Set methods: the answer
// is kept as typed when set accepts it.
func keep(set func(string) error) func(string) (string, error) {
	return func(s string) (string, error) { return s, set(s) }
}

// askCompany asks the company's data and the footer's, each checked as it
// is answered.
func askCompany(a *asker, d *profilesetup.Draft, f addFlags) error {
	steps := []struct{ prompt, flag, given, def, field string }{
		{"RUC", "ruc", f.ruc, "", profilesetup.FieldRUC},
		{"Razón social", "razon-social", f.razonSocial, "", profilesetup.FieldRazonSocial},
		{"Nombre comercial (opcional, «-» para ninguno)", "nombre-comercial", f.nombreComercial, "-", profilesetup.FieldNombreComercial},
		{"Código de sucursal de DGI (1 para la casa principal)", "codigo-sucursal", itoaOrEmpty(f.codigoSucursal), "1",
			profilesetup.FieldCodigoSucursal},
		{"Nombre de la sucursal (opcional, «-» para ninguno)", "sucursal", f.sucursal, "-", profilesetup.FieldSucursal},
		{"Domicilio fiscal", "domicilio", f.domicilio, "", profilesetup.FieldDomicilioFiscal},
		{"Ciudad", "ciudad", f.ciudad, "", profilesetup.FieldCiudad},
		{"Departamento", "departamento", f.departamento, "", profilesetup.FieldDepartamento},
	}
	for _, st := range steps {
		set := func(s string) error { return d.SetCompany(st.field, s) }
		if _, err := a.ask(st.prompt, st.flag, st.given, st.def, keep(set)); err != nil {
			return err
		}
	}
	// The footer: the date of entry to the regime, or the resolution.
	if f.fechaEmisor != "" && f.resolucion != "" {
		return errors.New("indique --fecha-emisor o --resolucion, no ambas: quien ingresó por resolución imprime solo la resolución")
	}
	if f.resolucion == "" {
		if _, err := a.ask("Fecha de ingreso al régimen de CFE (AAAA-MM-DD; «-» si ingresó por resolución)", "fecha-emisor",
			f.fechaEmisor, "", keep(d.SetFechaEmisor)); err != nil {
			return err
		}
	}
	if !d.HasFechaEmisor() {
		if _, err := a.ask("Resolución de DGI (número/año)", "resolucion", f.resolucion, "", keep(d.SetResolucion)); err != nil {
			return err
		}
	}
	_, err := a.ask("Web donde publica sus e-Tickets (opcional, «-» para ninguna)", "web", f.web, "-", keep(d.SetWeb))
	return err
}

func itoaOrEmpty(n int) string {
	if n == 0 {
		return ""
	}
	return strconv.Itoa(n)
}

// askCertificate asks the certificate file and its password until they open
// and the certificate can sign for the company, or its only problem (a chain
// that reaches no accredited authority) is accepted.
func askCertificate(a *asker, d *profilesetup.Draft, f addFlags) error {
	for {
		if _, err := a.ask("Archivo del certificado (.p12 o .pfx)", "certificado", f.cert, "", keep(d.ReadCertificate)); err != nil {
			return err
		}
		f.cert = ""
		err := a.askPassword(f.certPassword, d.OpenCertificate)
		f.certPassword = ""
		if err != nil {
			if errors.Is(err, errWrongFile) && a.interactive {
				continue
			}
			return err
		}
		problem, untrusted := d.CertificateProblem()
		if problem == "" {
			fmt.Fprintf(a.out, "  ✓ %s\n", d.CertificateSummary())
			return nil
		}
		if untrusted {
			fmt.Fprintf(a.out, "  ! %s: DGI rechazará los comprobantes firmados con él\n", problem)
			ok := f.acceptUntrusted
			if !ok && a.interactive {
				if ok, err = a.confirm("¿Usar este certificado igual?"); err != nil {
					return err
				}
			}
			if ok {
				return nil
			}
			if !a.interactive {
				return fmt.Errorf("--certificado: %s (use --aceptar-cadena-no-confiable para aceptarlo)", problem)
			}
			continue
		}
		if !a.interactive {
			return fmt.Errorf("--certificado: %s", problem)
		}
		fmt.Fprintf(a.out, "  ✗ %s\n", problem)
	}
}

// errWrongFile is askPassword's error when the file, not the password, is
// at fault: another file is asked.
var errWrongFile = errors.New("wrong certificate file")

// askPassword asks the password until open accepts it; a file that is no
// PKCS#12 at all ends the questions with errWrongFile.
func (a *asker) askPassword(given string, open func(string) error) error {
	for {
		pw := given
		if given == "" {
			if !a.interactive {
				return errors.New("falta --clave-certificado (o CFE_AGENT_CERTIFICATE_PASSWORD): la contraseña del certificado")
			}
			var err error
			if pw, err = a.secret("Contraseña del certificado"); err != nil {
				return err
			}
		}
		given = ""
		err := open(pw)
		switch {
		case err == nil:
			return nil
		case !errors.Is(err, profilesetup.ErrWrongPassword):
			if !a.interactive {
				return fmt.Errorf("--certificado: %s", describe(err))
			}
			fmt.Fprintf(a.out, "  ✗ %s\n", describe(err))
			return errWrongFile
		case !a.interactive:
			return errors.New("--clave-certificado: la contraseña del certificado es incorrecta")
		}
		fmt.Fprintln(a.out, "  ✗ la contraseña del certificado es incorrecta")
	}
}

// askCAE asks DGI's CAE files, one per answer, until an empty answer («-»).
func askCAE(a *asker, d *profilesetup.Draft, f addFlags) error {
	check := func(s string) (string, error) {
		if s == "-" {
			return s, nil
		}
		summary, err := d.AddCAE(s)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(a.out, "  ✓ %s\n", summary)
		return s, nil
	}
	for _, given := range f.cae {
		if _, err := a.ask("Archivo CAE", "cae", given, "", check); err != nil {
			return err
		}
	}
	if !a.interactive {
		return nil
	}
	for {
		s, err := a.ask("Archivo CAE de DGI (.xml; «-» para terminar)", "cae", "", "-", check)
		if err != nil {
			return err
		}
		if s == "-" {
			if d.CAECount() == 0 {
				fmt.Fprintln(a.out, "  ! sin archivos CAE el perfil no puede firmar: impórtelos luego con «cfe-agent cae import»")
			}
			return nil
		}
	}
}

// askPrinter asks the printer: one of the machine's (CUPS queues, Windows
// printers), listed with their state, or a folder where the PDFs are saved.
func askPrinter(ctx context.Context, a *asker, d *profilesetup.Draft, f addFlags) error {
	if f.sinImpresora {
		return nil
	}
	lctx, cancel := context.WithTimeout(ctx, app.SystemPrintersTimeout)
	system, err := profilesetup.SystemPrinters(lctx)
	cancel()
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
	_, err = a.ask("Impresora (una de las listadas, una carpeta para guardar los PDF, o «-» para ninguna)", "impresora",
		f.impresora, "", keep(func(s string) error { return d.SetPrinter(s, system) }))
	return err
}
