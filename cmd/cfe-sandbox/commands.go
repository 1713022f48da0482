package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/sandbox"
)

// dataFlags name the environment and its data, shared by every command.
type dataFlags struct {
	environment string
	dataDir     string
}

func (d *dataFlags) register(cmd *cobra.Command) {
	cmd.PersistentFlags().StringVar(&d.environment, "environment", sandbox.EnvSandbox, "environment: sandbox (keys xx_test_) or produccion (keys xx_live_)")
	cmd.PersistentFlags().StringVar(&d.dataDir, "data-dir", "cfe-sandbox-data", "directory of the emulator's data")
}

func newRootCommand(ctx context.Context) *cobra.Command {
	var data dataFlags
	cfg := sandbox.Config{}
	var seedFile string
	var dgiURL string
	root := &cobra.Command{
		Use:           "cfe-sandbox",
		Short:         "Offline emulator of the hosted CFE service",
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg.Environment, cfg.DataDir = data.environment, data.dataDir
			if seedFile != "" {
				seed, err := sandbox.LoadSeed(seedFile)
				if err != nil {
					return err
				}
				cfg.Seed = seed
			}
			cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
			cfg.Out = cmd.OutOrStdout()
			switch dgiURL {
			case dgiOff:
			case dgiInternal:
				cfg.DGI.Enabled = true
			default:
				cfg.DGI.Enabled, cfg.DGI.URL = true, strings.TrimRight(dgiURL, "/")
			}
			return serve(ctx, cfg)
		},
	}
	data.register(root)
	f := root.Flags()
	f.StringVar(&cfg.Listen, "listen", sandbox.DefaultListen, "address to listen on")
	f.StringVar(&cfg.DemoPassword, "demo-password", "", "password of the demo user created on first run (generated and printed when empty)")
	f.StringVar(&seedFile, "seed", "", "JSON file of users, companies and API keys to load at start")
	f.StringVar(&cfg.SMTPAddr, "smtp", "", "host:port of the SMTP server that delivers password-recovery mail")
	f.BoolVar(&cfg.TrustProxy, "trust-proxy", false, "take the client address from the last X-Forwarded-For hop")
	f.IntVar(&cfg.LoginLimits.PerIP, "login-limit-ip", sandbox.DefaultLoginLimits.PerIP, "failed logins per address before 429")
	f.IntVar(&cfg.LoginLimits.PerPrefix, "login-limit-prefix", sandbox.DefaultLoginLimits.PerPrefix, "failed logins per /24 or /64 before 429")
	f.IntVar(&cfg.LoginLimits.AlertFailures, "login-alert-failures", sandbox.DefaultLoginLimits.AlertFailures, "failed logins against one user that raise an alert")
	f.IntVar(&cfg.LoginLimits.AlertNetworks, "login-alert-networks", sandbox.DefaultLoginLimits.AlertNetworks, "distinct networks those failures must come from")
	f.DurationVar(&cfg.LoginLimits.Window, "login-window", sandbox.DefaultLoginLimits.Window, "window over which failed logins are counted")
	f.IntVar(&cfg.KeyFailureLimits.Failures, "key-failures", sandbox.DefaultKeyFailureLimits.Failures, "invalid API keys per address before 429")
	f.DurationVar(&cfg.KeyFailureLimits.Window, "key-failure-window", sandbox.DefaultKeyFailureLimits.Window, "time an address takes to earn all its API key tries back")

	// The provider's sending to DGI (docs/sandbox.md, "The provider sends
	// to DGI"); help in Spanish, like the dgi command's.
	f.StringVar(&dgiURL, "dgi-url", envOr("CFE_SANDBOX_DGI_URL", dgiInternal),
		"a dónde envía el proveedor los CFE para DGI: \""+dgiInternal+"\" (un emulador de DGI dentro del proceso, con sus datos en\n"+
			"DATA-DIR/dgi-ENTORNO), la URL base de otro emulador o servicio con las rutas de DGI (p. ej. la de «cfe-sandbox dgi»),\n"+
			"o \""+dgiOff+"\" para no enviar a DGI (variable CFE_SANDBOX_DGI_URL)")
	f.StringVar(&cfg.DGI.Certificate, "dgi-certificado", os.Getenv("CFE_SANDBOX_DGI_CERTIFICADO"),
		"con --dgi-url: archivo PEM del certificado con el que firman sus respuestas (DATA-DIR/dgi-cert.pem de «cfe-sandbox dgi»;\n"+
			"variable CFE_SANDBOX_DGI_CERTIFICADO)")
	f.StringVar(&cfg.DGI.Listen, "dgi-listen", "127.0.0.1:0", "dirección de los servicios del emulador de DGI interno (127.0.0.1:0: un puerto libre)")
	f.StringVar(&cfg.DGI.AdminListen, "dgi-admin-listen", "127.0.0.1:0", "dirección de administración del emulador de DGI interno (perillas y conteos)")
	f.DurationVar(&cfg.DGI.Processing, "dgi-procesamiento", 0,
		"emulador de DGI interno: tiempo desde la recepción de un sobre hasta que se puede consultar su resultado (0: el del emulador; negativo: inmediato)")
	// The daily report (docs/reporte-diario-proveedor.md).
	f.DurationVar(&cfg.DGI.ReportOffset, "reporte-desfase", 0,
		"adelanta el reloj del reporte diario (pruebas y demostraciones: con 24h el reporte de hoy se envía enseguida, como si hoy fuera ayer)")
	f.DurationVar(&cfg.DGI.ReportPoll, "reporte-intervalo", 0, "espera entre dos rondas del reporte diario (0: un minuto)")
	f.DurationVar(&cfg.DGI.ReportCheck, "reporte-consulta", 0, "espera entre dos consultas del estado posterior de un reporte recibido (0: 10 minutos)")

	root.AddCommand(userCommand(&data), companyCommand(&data), dgiCommand(ctx))
	return root
}

// Values of --dgi-url besides a URL.
const (
	dgiInternal = "interno"
	dgiOff      = "no"
)

// envOr returns the environment variable name, or def when it is unset or
// empty.
func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// serve runs the emulator until ctx is done.
func serve(ctx context.Context, cfg sandbox.Config) error {
	srv, err := sandbox.New(cfg)
	if err != nil {
		return err
	}
	if err := srv.Open(); err != nil {
		return errors.Join(err, srv.Close())
	}
	fmt.Fprintf(cfg.Out, "cfe-sandbox (%s) listening on %s\n", cfg.Environment, srv.URL())
	switch e := srv.DGIEmulator(); {
	case e != nil:
		fmt.Fprintf(cfg.Out, "envía a DGI como proveedor: emulador de DGI interno en %s (administración en %s/admin/estado)\n", e.URL(), e.AdminURL())
	case cfg.DGI.Enabled:
		fmt.Fprintf(cfg.Out, "envía a DGI como proveedor: %s\n", cfg.DGI.URL)
	}
	<-ctx.Done()
	return srv.Close()
}

func userCommand(data *dataFlags) *cobra.Command {
	user := &cobra.Command{Use: "user", Short: "Manage users"}
	var u sandbox.SeedUser
	add := &cobra.Command{
		Use:   "add",
		Short: "Add a user (a password is generated and printed when --password is empty)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			generated := u.Password == ""
			if generated {
				u.Password = randomPassword()
			}
			return withAdmin(data, func(a *sandbox.Admin) error {
				id, err := a.AddUser(u)
				if err != nil {
					return err
				}
				out := fmt.Sprintf("user %q added with id %d\n", u.Username, id)
				if generated {
					out += fmt.Sprintf("password: %s (shown only now)\n", u.Password)
				}
				_, err = fmt.Fprint(cmd.OutOrStdout(), out)
				return err
			})
		},
	}
	add.Flags().StringVar(&u.Username, "username", "", "login name (required)")
	add.Flags().StringVar(&u.Email, "email", "", "e-mail address for password recovery")
	add.Flags().StringVar(&u.Password, "password", "", "password")
	add.Flags().StringSliceVar(&u.Empresas, "empresa", nil, "RUC of a company of the user (repeatable)")
	cobra.CheckErr(add.MarkFlagRequired("username"))
	user.AddCommand(add)
	return user
}

func companyCommand(data *dataFlags) *cobra.Command {
	company := &cobra.Command{Use: "company", Short: "Manage companies"}
	var c sandbox.SeedCompany
	constancia := true
	add := &cobra.Command{
		Use:   "add",
		Short: "Add a company",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c.ConstanciaIVAAlDia = &constancia
			return withAdmin(data, func(a *sandbox.Admin) error {
				id, err := a.AddCompany(c)
				if err != nil {
					return namingFlags(err, companyFlags)
				}
				_, err = fmt.Fprintf(cmd.OutOrStdout(), "company %s added with id %d\n", c.RUC, id)
				return err
			})
		},
	}
	add.Flags().StringVar(&c.RUC, "ruc", "", "RUC (required)")
	add.Flags().StringVar(&c.RazonSocial, "razon-social", "", "legal name (required)")
	add.Flags().StringVar(&c.FormatoRepImpresa, "formato", "", "default print template (Estandar when empty)")
	add.Flags().IntVar(&c.LimitePorMinuto, "limite-por-minuto", 0, "default per-minute limit of the company's API keys")
	add.Flags().IntVar(&c.LimitePorHora, "limite-por-hora", 0, "default per-hour limit of the company's API keys")
	add.Flags().StringVar(&c.FechaEmisor, "fecha-emisor", "", "date the company entered the CFE regime (YYYY-MM-DD), printed in the footer")
	add.Flags().StringVar(&c.Resolucion, "resolucion", "", "DGI resolution that incorporated the company (1234/2016), printed instead of --fecha-emisor")
	add.Flags().StringVar(&c.WebURL, "web-url", "", "web site (http or https) where the company's e-Tickets are verified")
	add.Flags().BoolVar(&constancia, "constancia-iva-al-dia", true, "print the IVA al día constancia in the footer where the CFE allows it")
	cobra.CheckErr(add.MarkFlagRequired("ruc"))
	cobra.CheckErr(add.MarkFlagRequired("razon-social"))
	company.AddCommand(add)
	return company
}

// companyFlags names the flags of company add by the seed fields that the
// sandbox's errors name.
var companyFlags = map[string]string{
	"ruc":         "--ruc",
	"razonSocial": "--razon-social",
	"fechaEmisor": "--fecha-emisor",
	"resolucion":  "--resolucion",
	"webUrl":      "--web-url",
}

// namingFlags rewrites an error about seed fields so that it names the
// command's flags instead: one line per field, "--flag: message". Other
// errors are returned as they are.
func namingFlags(err error, flags map[string]string) error {
	fields := cfe.ErrorFields(err)
	if len(fields) == 0 {
		return err
	}
	lines := make([]string, 0, len(fields))
	for _, f := range fields {
		name := f.Campo
		if flag, ok := flags[name]; ok {
			name = flag
		}
		lines = append(lines, name+": "+f.Mensaje)
	}
	return errors.New(strings.Join(lines, "\n"))
}

func withAdmin(data *dataFlags, fn func(*sandbox.Admin) error) error {
	a, err := sandbox.OpenAdmin(data.dataDir, data.environment)
	if err != nil {
		return err
	}
	return errors.Join(fn(a), a.Close())
}

func randomPassword() string { return rand.Text() }
