package main

import (
	"cmp"
	"crypto/x509"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/cfe-agent/cfe-agent/app"
	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/profiles"
	"github.com/cfe-agent/cfe-agent/signer"
)

func newCertCommand(opts *app.Options) *cobra.Command {
	cmd := &cobra.Command{Use: "cert", Short: "Certificado de firma de la empresa"}
	var password string
	imp := &cobra.Command{
		Use:   "import FILE.p12",
		Short: "Importa el certificado de firma (.p12/.pfx) al perfil activo",
		Long: "Comprueba el archivo (contraseña, vigencia, RUC de la empresa), lo copia a la carpeta de datos " +
			"y lo configura en el perfil. La contraseña se toma de --password o de CFE_AGENT_CERTIFICATE_PASSWORD.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if password == "" {
				password = os.Getenv(profiles.EnvPrefix + "CERTIFICATE_PASSWORD")
			}
			return importCertificate(cmd, *opts, args[0], password)
		},
	}
	imp.Flags().StringVar(&password, "password", "", "`CONTRASEÑA` del archivo PKCS#12 (si no se indica: CFE_AGENT_CERTIFICATE_PASSWORD)")
	cmd.AddCommand(imp, &cobra.Command{
		Use:   "show",
		Short: "Muestra el certificado de firma del perfil activo",
		Long: "Muestra el certificado de firma del perfil activo. Con el agente en ejecución muestra el que el " +
			"agente usa (leído de su módulo local); si no, el del archivo que indica el perfil.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			live, err := app.OpenLive(cmd.Context(), *opts)
			if err != nil {
				return err
			}
			if live != nil {
				live.Note(cmd.ErrOrStderr())
				c := live.State.Certificate
				if c == nil {
					return cfe.Errorf(cfe.EUNAVAILABLE, "el agente en ejecución no tiene un certificado de firma utilizable: %s",
						cmp.Or(live.State.CertificateError, "no hay certificado configurado"))
				}
				dataDir, cfg, _, err := app.LoadConfig(*opts)
				if err != nil {
					return err
				}
				p, _ := cfg.ActiveProfile()
				printCertificate(cmd, certView{path: p.Resolve(dataDir).Certificate.Path, subject: c.SubjectDN, issuer: c.Issuer,
					ruc: c.RUC, serial: c.SerialNumber, notBefore: c.NotBefore, notAfter: c.NotAfter, daysLeft: c.DaysLeft,
					test: c.Test})
				return nil
			}
			a, err := app.Open(cmd.Context(), *opts, cliLogger())
			if err != nil {
				return err
			}
			defer a.Close()
			if a.Signer == nil {
				return a.CertErr
			}
			printCertificate(cmd, certViewOf(a.Signer.Certificate(), a.Profile.Certificate.Path))
			return nil
		},
	})
	return cmd
}

// importCertificate checks a PKCS#12 file and makes it the profile's signing
// certificate. Nothing changes when any check fails.
func importCertificate(cmd *cobra.Command, opts app.Options, file, password string) error {
	dataDir, cfg, _, err := app.LoadConfig(opts)
	if err != nil {
		return err
	}
	p, ok := cfg.ActiveProfile()
	if !ok {
		return cfe.Errorf(cfe.ENOTFOUND, "el perfil %q no existe", cfg.Active)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	creds, err := signer.LoadPKCS12(b, password)
	if err != nil {
		return err
	}
	info := signer.CertInfo(creds.Certificate, time.Now())
	if info.Expired {
		return cfe.Errorf(cfe.EINVALID, "el certificado venció el %s", creds.Certificate.NotAfter.Format(time.DateOnly))
	}
	if info.RUC != "" && info.RUC != p.Company.RUC {
		return cfe.Errorf(cfe.EINVALID, "el certificado es del RUC %s y el perfil %q es del RUC %s", info.RUC, cfg.Active, p.Company.RUC)
	}
	dest := filepath.Join(dataDir, "certs", cfg.Active+".p12")
	if err := os.MkdirAll(filepath.Dir(dest), 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(dest, b, 0o600); err != nil {
		return err
	}
	p.Certificate.Path = filepath.Join("certs", cfg.Active+".p12")
	p.Certificate.KeyPath = ""
	p.Certificate.Password = profiles.Secret(password)
	cfg.Profiles[cfg.Active] = p
	if err := profiles.Save(dataDir, cfg); err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "certificado importado en %s para el perfil %q\n", dest, cfg.Active)
	printCertificate(cmd, certViewOf(creds.Certificate, dest))
	return nil
}

// certView is what cert show prints of a certificate, read from its file or
// from the running agent's /state.
type certView struct {
	path, subject, issuer, ruc, serial string
	notBefore, notAfter                time.Time
	daysLeft                           int
	test                               bool
}

func certViewOf(c *x509.Certificate, path string) certView {
	i := signer.CertInfo(c, time.Now())
	return certView{path: path, subject: i.SubjectDN, issuer: i.Issuer, ruc: i.RUC, serial: i.SerialNumber,
		notBefore: i.NotBefore, notAfter: i.NotAfter, daysLeft: i.DaysToExpiry, test: i.Test}
}

func printCertificate(cmd *cobra.Command, v certView) {
	w := cmd.OutOrStdout()
	fmt.Fprintf(w, "archivo:   %s\nsujeto:    %s\nemisor:    %s\nRUC:       %s\nserie:     %s\n", v.path, v.subject, v.issuer, v.ruc, v.serial)
	fmt.Fprintf(w, "vigencia:  %s a %s (%d días restantes)\n", v.notBefore.UTC().Format(time.DateOnly),
		v.notAfter.UTC().Format(time.DateOnly), v.daysLeft)
	if v.test {
		fmt.Fprintln(w, "ATENCIÓN:  certificado de prueba, sin valor fiscal")
	}
}
