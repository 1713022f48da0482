package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/profiles"
)

// TestCertDiagnosis: the doctor's line on the profile's certificate gives
// the real reason it cannot sign, each with its status.
func TestCertDiagnosis(t *testing.T) {
	t.Parallel()
	cert := newIssuing(t).certificateFile(t) // a test certificate of testRUC, valid from now
	profile := func(env profiles.Environment, ruc string, c profiles.Certificate) profiles.Profile {
		var p profiles.Profile
		p.Environment, p.Company.RUC, p.Certificate = env, ruc, c
		return p
	}
	wrongPassword := cert
	wrongPassword.Password = "otra"
	missing := profiles.Certificate{Path: filepath.Join(t.TempDir(), "no.p12")}
	notAFile := profiles.Certificate{Path: filepath.Join(t.TempDir(), "basura.p12")}
	if err := os.WriteFile(notAFile.Path, []byte("no es PKCS#12"), 0o600); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	tests := []struct {
		name   string
		p      profiles.Profile
		at     time.Time
		status string
		want   string
	}{
		{"sandbox, its test certificate", profile(profiles.Sandbox, testRUC, cert), now, CheckOK,
			"RUC " + testRUC + ", vence el "},
		{"production, a test certificate", profile(profiles.Produccion, testRUC, cert), now, CheckFail,
			"es un certificado de prueba, sin valor fiscal, en un perfil de producción"},
		{"another company's", profile(profiles.Sandbox, "214844360018", cert), now, CheckFail,
			"es del RUC " + testRUC + " y el perfil es del RUC 214844360018"},
		{"expired", profile(profiles.Sandbox, testRUC, cert), now.AddDate(20, 0, 0), CheckFail, "importe el certificado renovado"},
		{"not yet valid", profile(profiles.Sandbox, testRUC, cert), now.AddDate(0, 0, -2), CheckFail, "no se puede firmar hasta entonces"},
		{"none", profile(profiles.Sandbox, testRUC, profiles.Certificate{}), now, CheckFail,
			"el perfil no indica certificado de firma (certificate.path)"},
		{"no file", profile(profiles.Sandbox, testRUC, missing), now, CheckFail, "el archivo " + missing.Path + " no existe"},
		{"wrong password", profile(profiles.Sandbox, testRUC, wrongPassword), now, CheckFail,
			"la contraseña de " + cert.Path + " es incorrecta"},
		{"not a certificate", profile(profiles.Sandbox, testRUC, notAFile), now, CheckFail, notAFile.Path + " no se puede usar: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			status, msg, _ := certDiagnosis(tt.p, tt.at)
			if status != tt.status || !strings.Contains(msg, tt.want) {
				t.Errorf("certDiagnosis = %s %q, want %s with %q", status, msg, tt.status, tt.want)
			}
		})
	}
}
