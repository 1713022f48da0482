package main_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/internal/testtool/cupsd"
	"github.com/cfe-agent/cfe-agent/signer"
)

// runCLIInput runs a one-shot command with input on its stdin.
func runCLIInput(t *testing.T, env []string, input string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(agentBinary(t), args...)
	cmd.Env, cmd.Stdin = env, strings.NewReader(input)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(out), ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), 0
}

// caeFile writes a CAE file like DGI's for the RUC (e-Ticket serie A, 1 to
// 5000, granted a month ago, expiring in two years), signed with a test
// certificate that the file carries.
func caeFile(t *testing.T, ruc, name string) string {
	t.Helper()
	now := time.Now()
	granted, expires := now.AddDate(0, -1, 0).Format(time.DateOnly), now.AddDate(2, 0, 0).Format(time.DateOnly)
	xml := fmt.Sprintf(`<?xml version="1.0" encoding="UTF-8"?>`+"\n"+`<ns0:CAE xmlns:ns0="http://cfe.dgi.gub.uy" version="1.0">`+
		`<ns0:TmstFrma>%sT10:00:00-03:00</ns0:TmstFrma><ns0:DA><ns0:RucE>%s</ns0:RucE><ns0:TCFE>101</ns0:TCFE>`+
		`<ns0:Serie>A</ns0:Serie><ns0:DNro>1</ns0:DNro><ns0:HNro>5000</ns0:HNro><ns0:TA>E</ns0:TA>`+
		`<ns0:NA>90261234567</ns0:NA><ns0:FA>%s</ns0:FA><ns0:FVD>%s</ns0:FVD></ns0:DA></ns0:CAE>`, granted, ruc, granted, expires)
	creds, err := signer.GenerateTestCertificate("214844360018", "DGI de prueba", now.AddDate(0, -2, 0))
	if err != nil {
		t.Fatal(err)
	}
	s, err := signer.New(signer.Config{Credentials: creds})
	if err != nil {
		t.Fatal(err)
	}
	signed, err := s.Sign([]byte(xml))
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(f, signed.XML, 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestProfileAdd_interactive drives profile add through its questions with
// a bad answer to each kind of check: it asks again until the answer is
// valid, and the profile it writes works.
func TestProfileAdd_interactive(t *testing.T) {
	t.Parallel()
	const ruc = "219999830019"
	now := time.Now()
	dataDir := t.TempDir()
	// No CUPS answers: the machine's printers cannot be listed.
	env := agentEnv("CFE_AGENT_DATA_DIR="+dataDir, "CUPS_SERVER=127.0.0.1:"+itoa(int64(cupsd.FreePort(t))))
	cert := certFile(t, ruc, now.Add(-time.Hour), now.AddDate(1, 0, 0))
	expired := certFile(t, ruc, now.AddDate(-2, 0, 0), now.AddDate(0, 0, -1))
	good, foreign := caeFile(t, ruc, "CAE_101_A.xml"), caeFile(t, "214844360018", "CAE_otro.xml")
	pdfs := filepath.Join(t.TempDir(), "pdf")
	answers := []string{
		"214844360017", "219999830019", // RUC: a wrong check digit, then the right one
		"", "ALMACÉN LA ESQUINA S.R.L.", // razón social: required
		"La Esquina",
		"0", "2", // DGI's branch code: 1 to 9999
		"-",
		"Rivera 1234", "Montevideo", "Montevideo",
		"2026-13-01", "2020-03-01", // Fecha emisor: a date
		"www sin esquema", "https://www.laesquina.com.uy/cfe",
		"6,4208",
		"/no/existe.p12", expired, // the certificate: missing, then expired
		"clave", cert, "mal", "clave", // then a good one, with a wrong password first
		"s",                // accepted without an accredited chain
		foreign, good, "-", // a CAE of another company, then the company's
		"Caja_Inexistente", pdfs, // the printer: not on this machine, then a folder
	}
	out, code := runCLIInput(t, env, strings.Join(answers, "\n")+"\n", "profile", "add", "esquina")
	if code != 0 {
		t.Fatalf("profile add: exit %d\n%s", code, out)
	}
	mustContainAll(t, "profile add's refusals", out,
		"✗ RUC inválido: 12 dígitos con dígito verificador correcto",
		"✗ obligatorio",
		"✗ obligatorio: el código de la casa principal o sucursal que asignó DGI (1 a 9999)",
		"✗ se espera una fecha AAAA-MM-DD",
		"✗ se espera la dirección web",
		"✗ el archivo /no/existe.p12 no existe",
		"✗ el certificado venció el",
		"✗ la contraseña del certificado es incorrecta",
		"! cadena no confiable",
		"✗ CAE_otro.xml:",
		"✓ e-Ticket serie A, números 1 a 5000",
		"! no se pudieron listar las impresoras del equipo",
		"✗ el equipo no tiene una impresora «Caja_Inexistente»",
		`Perfil "esquina" creado`, "Para usarlo: cfe-agent profile use esquina")
	if strings.Count(out, "✗ obligatorio") < 2 {
		t.Errorf("razón social and branch code should each be refused once:\n%s", out)
	}

	// The files were copied into the data directory, byte for byte.
	for src, dst := range map[string]string{cert: filepath.Join(dataDir, "certs", "esquina.p12"),
		good: filepath.Join(dataDir, "cae", "esquina", "CAE_101_A.xml")} {
		a, _ := os.ReadFile(src)
		b, err := os.ReadFile(dst)
		if err != nil || !bytes.Equal(a, b) {
			t.Errorf("%s is not a copy of %s (%v)", dst, src, err)
		}
	}
	out, code = runCLI(t, env, "profile", "show", "esquina")
	mustContainAll(t, "profile show esquina", out, "environment: produccion", `ruc: "219999830019"`,
		"razon_social: ALMACÉN LA ESQUINA S.R.L.", "cdg_dgi_sucur: 2", "domicilio_fiscal: Rivera 1234",
		`fecha_emisor: "2020-03-01"`, "web_url: https://www.laesquina.com.uy/cfe", "password: '***'",
		"backend: dir", "dir: "+pdfs, "default_printer: caja", `valor_ui: "6.4208"`)
	if code != 0 || strings.Contains(out, "clave") {
		t.Errorf("profile show esquina: exit %d, or the password shows:\n%s", code, out)
	}
	// The profile works: its store takes the CAE file at the first open.
	out, code = runCLI(t, env, "--profile", "esquina", "cae", "list")
	if code != 0 || !strings.Contains(out, "dgi") || !strings.Contains(out, "5000") {
		t.Errorf("cae list of the new profile: exit %d\n%s", code, out)
	}
	// The default profile is still the active one, and intact.
	if out, _ := runCLI(t, env, "profile", "list"); !strings.Contains(out, "* sandbox") || !strings.Contains(out, "esquina") {
		t.Errorf("profile list after add:\n%s", out)
	}
}

// TestProfileAdd_flags: every answer as an option, without questions; a
// bad one fails and leaves nothing behind.
func TestProfileAdd_flags(t *testing.T) {
	t.Parallel()
	const ruc = "219999830019"
	now := time.Now()
	cert := certFile(t, ruc, now.Add(-time.Hour), now.AddDate(1, 0, 0))
	good := caeFile(t, ruc, "CAE_101_A.xml")
	args := func(extra ...string) []string {
		return append([]string{"profile", "add", "esquina", "--no-interactivo", "--ruc", ruc,
			"--razon-social", "ALMACÉN LA ESQUINA S.R.L.", "--codigo-sucursal", "1", "--domicilio", "Rivera 1234",
			"--ciudad", "Montevideo", "--departamento", "Montevideo", "--resolucion", "1234/2016",
			"--certificado", cert, "--clave-certificado", "clave", "--cae", good, "--sin-impresora"}, extra...)
	}
	tests := []struct {
		name  string
		extra []string
		code  int
		want  string
	}{
		{"a bad RUC", []string{"--ruc", "219999830018"}, 1, "--ruc: RUC inválido"},
		{"an untrusted chain not accepted", nil, 1, "use --aceptar-cadena-no-confiable para aceptarlo"},
		{"a wrong password", []string{"--clave-certificado", "mal", "--aceptar-cadena-no-confiable"}, 1,
			"--clave-certificado: la contraseña del certificado es incorrecta"},
		{"a missing answer", []string{"--domicilio", ""}, 1, "falta --domicilio"},
		{"both a date and a resolution", []string{"--fecha-emisor", "2020-03-01"}, 1, "indique --fecha-emisor o --resolucion, no ambas"},
		{"everything right", []string{"--aceptar-cadena-no-confiable", "--usar"}, 0, "Es el perfil activo"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dataDir := t.TempDir()
			env := agentEnv("CFE_AGENT_DATA_DIR=" + dataDir)
			if out, code := runCLI(t, env, "profile", "list"); code != 0 {
				t.Fatal(out)
			}
			before, _ := os.ReadFile(filepath.Join(dataDir, "config.yaml"))
			out, code := runCLIInput(t, env, "", args(tt.extra...)...)
			if code != tt.code || !strings.Contains(out, tt.want) {
				t.Fatalf("exit %d, want %d with %q:\n%s", code, tt.code, tt.want, out)
			}
			after, _ := os.ReadFile(filepath.Join(dataDir, "config.yaml"))
			_, certErr := os.Stat(filepath.Join(dataDir, "certs", "esquina.p12"))
			if tt.code != 0 {
				if !bytes.Equal(before, after) || certErr == nil {
					t.Error("a refused profile add changed config.yaml or copied the certificate")
				}
				return
			}
			if out, _ := runCLI(t, env, "profile", "list"); !strings.Contains(out, "* esquina") {
				t.Errorf("--usar did not make the profile active:\n%s", out)
			}
			if !bytes.Contains(after, []byte("resolucion: 1234/2016")) || certErr != nil {
				t.Errorf("config.yaml lacks the resolution or the certificate was not copied (%v):\n%s", certErr, after)
			}
		})
	}
}
