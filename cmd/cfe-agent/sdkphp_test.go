package main_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/sandbox"
)

// The vendor SDK's world in the sandbox: its example script's user and
// secret, with one company that gets idEmpresa 2 (the demo company of the
// first run is 1), as the example names it; a company of someone else (3).
const (
	sdkUser        = "dev@bluetech"
	sdkSecret      = "sdk-example-secret-0001"
	sdkRUC         = "211111110015"
	sdkCompany     = 2
	foreignRUC     = "212222220011"
	foreignCompany = 3
	foreignKey     = "xx_test_otra-empresa-000000000000000001"
	limitedKey     = "xx_test_sdk-una-por-minuto-0000000000001"
)

// sdkEpoch is the sandbox's clock when a run starts: 15:00:00 in Montevideo
// on the date of the vendor's example (its fechaEmision is fixed).
var sdkEpoch = time.Date(2026, time.February, 12, 18, 0, 0, 0, time.UTC)

// sdkClock is the sandbox's settable clock.
type sdkClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *sdkClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *sdkClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// requirePHP returns the php binary after checking the run-time the SDK
// needs (php-curl, php-mbstring, Debian's Guzzle and PSR-7); without them the
// test skips, or fails under CFE_STRICT_TOOLS=1.
func requirePHP(t *testing.T) string {
	t.Helper()
	php := testtool.Require(t, "php")
	check := `exit(extension_loaded("curl") && extension_loaded("mbstring") && is_file("/usr/share/php/GuzzleHttp/autoload.php")` +
		` && is_file("/usr/share/php/GuzzleHttp/Psr7/autoload.php") ? 0 : 1);`
	if out, err := exec.Command(php, "-r", check).CombinedOutput(); err != nil {
		msg := "php-curl, php-mbstring, php-guzzlehttp-guzzle or php-guzzlehttp-psr7 is not installed"
		if os.Getenv("CFE_STRICT_TOOLS") == "1" {
			t.Fatalf("%s (CFE_STRICT_TOOLS=1): %v %s", msg, err, out)
		}
		t.Skipf("%s; set CFE_STRICT_TOOLS=1 to make this a failure", msg)
	}
	return php
}

// copySDK copies the vendor's SDK, unmodified, into a temporary directory
// and adds the few-line autoloader of testdata as its vendor/autoload.php
// (Composer's registry is not reachable). The example script's token file is
// written in the copy.
func copySDK(t *testing.T) string {
	t.Helper()
	src := filepath.Join(testtool.SharedDir(t), "clients", "bluetech-sdk-php")
	dst := filepath.Join(t.TempDir(), "bluetech-sdk-php")
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		testtool.CopyFile(t, path, filepath.Join(dst, rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dst, "vendor"), 0o755); err != nil {
		t.Fatal(err)
	}
	testtool.CopyFile(t, filepath.Join("testdata", "sdkphp", "autoload.php"), filepath.Join(dst, "vendor", "autoload.php"))
	return dst
}

// startSDKSandbox runs the sandbox with the SDK's user and companies at clk.
func startSDKSandbox(t *testing.T, clk *sdkClock) *sandbox.Server {
	t.Helper()
	sb, err := sandbox.New(sandbox.Config{Environment: sandbox.EnvSandbox, DataDir: t.TempDir(), Listen: "127.0.0.1:0",
		DemoPassword: "demo-password", PasswordCost: bcrypt.MinCost, Now: clk.Now,
		Seed: &sandbox.Seed{
			Companies: []sandbox.SeedCompany{{RUC: sdkRUC, RazonSocial: "Blue S.A."}, {RUC: foreignRUC, RazonSocial: "Otra S.A."}},
			Users:     []sandbox.SeedUser{{Username: sdkUser, Email: "dev@bluetech.test", Password: sdkSecret, Empresas: []string{sdkRUC}}},
			APIKeys: []sandbox.SeedKey{
				{Empresa: foreignRUC, Nombre: "caja ajena", Key: foreignKey},
				{Empresa: sdkRUC, Nombre: "una por minuto", Key: limitedKey, LimitePorMinuto: 1, LimitePorHora: 100},
			},
		}})
	if err != nil {
		t.Fatal(err)
	}
	if err := sb.Open(); err != nil {
		sb.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	return sb
}

// runPHP runs a PHP script with env and returns its output and exit code.
func runPHP(t *testing.T, php string, env []string, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, php, args...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, env...)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(out), ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), 0
}

// sdkFailure is what the scenario reports of an SDK exception.
type sdkFailure struct {
	Class     string            `json:"class"`
	Status    int               `json:"status"`
	Message   string            `json:"message"`
	Code      string            `json:"code"`
	Details   []cfe.FieldError  `json:"details"`
	RequestID string            `json:"requestId"`
	Headers   map[string]string `json:"headers"`
}

// sdkEmitted is the SDK's EmitComprobanteResponse, as the scenario reports it.
type sdkEmitted struct {
	ID           int64  `json:"_Id"`
	CodRespuesta string `json:"CodRespuesta"`
	TipoCfe      int    `json:"TipoCfe"`
	Serie        string `json:"Serie"`
	Nro          int64  `json:"Nro"`
	XmlFirmado   string `json:"XmlFirmado"`
}

type sdkTokens struct {
	Token        string `json:"token"`
	RefreshToken string `json:"refresh_token"`
	ExpiresAt    int64  `json:"expires_at"`
	ExpiresType  string `json:"expires_type"`
}

type sdkCompanyAnswer struct {
	IdEmpresa int64  `json:"idEmpresa"`
	RUC       string `json:"ruc"`
}

// TestVendorSDK_PHP runs the vendor's PHP SDK, unmodified, against a real
// sandbox and through a real agent in front of it: its own example script,
// login, refresh (explicit, and after a 401 on an expired JWT), the
// companies, emissions with its models (an e-Ticket, an e-Factura and a credit
// note with referencias) and the exceptions it maps.
func TestVendorSDK_PHP(t *testing.T) {
	php := requirePHP(t)
	scenario, err := filepath.Abs(filepath.Join("testdata", "sdkphp", "scenario.php"))
	if err != nil {
		t.Fatal(err)
	}
	xsd := testtool.XSD(t, "CFEDGI.xsd")
	for _, via := range []string{"sandbox", "agent"} {
		t.Run(via, func(t *testing.T) {
			clk := &sdkClock{t: sdkEpoch}
			sb := startSDKSandbox(t, clk)
			base := sb.URL()
			if via == "agent" {
				a := startAgent(t, agentEnv("CFE_AGENT_DATA_DIR="+t.TempDir(), "CFE_AGENT_HOSTED_URL="+sb.URL()), "--listen", "127.0.0.1:0")
				base = a.baseURL
			}
			sdk := copySDK(t)
			foreign := emitForeign(t, sb.URL())
			env := []string{"BT_BASE_URL=" + base, "BT_USER=" + sdkUser, "BT_SECRET=" + sdkSecret, "BT_LIMITED_KEY=" + limitedKey,
				"BT_FOREIGN_UUID=" + foreign, "BT_FOREIGN_COMPANY=" + itoa(foreignCompany), "BT_TODAY=" + cfe.DateOf(sdkEpoch.In(cfe.Montevideo)).String()}

			t.Run("the vendor's example script, unmodified", func(t *testing.T) {
				out, code := runPHP(t, php, env, filepath.Join(sdk, "tests", "emitir-cfe.php"))
				if code != 0 {
					t.Fatalf("tests/emitir-cfe.php exited %d:\n%s", code, out)
				}
				for _, want := range []string{"Emitido OK", "CodRespuesta: 00", "Comprobante: 111-H-"} {
					if !strings.Contains(out, want) {
						t.Errorf("output lacks %q:\n%s", want, out)
					}
				}
			})

			tokenFile := filepath.Join(t.TempDir(), "tokens.json")
			var login struct{ Login sdkTokens }
			scenarioRun(t, php, env, &login, scenario, sdk, "login", tokenFile)
			t.Run("login: expires_at an integer equal to the JWT's exp, the real claims", func(t *testing.T) {
				l := login.Login
				exp := sdkEpoch.Add(6 * time.Hour).Unix()
				if l.ExpiresType != "integer" || l.ExpiresAt != exp || l.RefreshToken == "" {
					t.Errorf("tokens %+v, want an integer expires_at %d and a refresh token", l, exp)
				}
				claims := jwtClaims(t, l.Token)
				want := map[string]any{"exp": float64(exp), "iat": float64(sdkEpoch.Unix()), "nbf": float64(sdkEpoch.Unix()),
					"iss": sb.URL(), "userName": sdkUser, "rol": "Supervisor de empresa"}
				for k, v := range want {
					if claims[k] != v {
						t.Errorf("claim %s = %#v, want %#v", k, claims[k], v)
					}
				}
				if emp, _ := claims["empresas"].([]any); len(emp) != 1 || emp[0] != float64(sdkCompany) {
					t.Errorf("claim empresas = %#v, want [%d]", claims["empresas"], sdkCompany)
				}
			})

			clk.advance(7 * time.Hour) // the stored JWT expires
			var run struct {
				After401 struct {
					Companies     []sdkCompanyAnswer `json:"companies"`
					Calls         []string           `json:"calls"`
					TokenChanged  bool               `json:"token_changed"`
					StoredChanged bool               `json:"stored_changed"`
				} `json:"after401"`
				Refresh struct {
					sdkTokens
					Companies []sdkCompanyAnswer `json:"companies"`
				} `json:"refresh"`
				Ticket, Factura, Nota                 sdkEmitted
				E400, E403, E403pdf, E404, E409, E429 sdkFailure
				LimitedFirst                          []sdkCompanyAnswer `json:"limited_first"`
			}
			scenarioRun(t, php, env, &run, scenario, sdk, "main", tokenFile)

			t.Run("a 401 on the expired JWT: one refresh at /auth/refresh, the call repeated", func(t *testing.T) {
				a := run.After401
				want := []string{"GET /api/v1/usuario/empresas 401", "POST /auth/refresh 200", "GET /api/v1/usuario/empresas 200"}
				if strings.Join(a.Calls, "|") != strings.Join(want, "|") || !a.TokenChanged || !a.StoredChanged {
					t.Errorf("%+v, want calls %v with a new token kept in the store", a, want)
				}
				if len(a.Companies) != 1 || a.Companies[0].IdEmpresa != sdkCompany || a.Companies[0].RUC != sdkRUC {
					t.Errorf("companies %+v", a.Companies)
				}
			})
			t.Run("an explicit refresh", func(t *testing.T) {
				r := run.Refresh
				if r.ExpiresType != "integer" || r.ExpiresAt != clk.Now().Add(6*time.Hour).Unix() || r.Token == login.Login.Token ||
					len(r.Companies) != 1 {
					t.Errorf("refresh %+v", r)
				}
			})
			t.Run("emitir with the SDK's models", func(t *testing.T) {
				for _, e := range []struct {
					name string
					got  sdkEmitted
					typ  int
					want []string
				}{
					{"e-Ticket", run.Ticket, 101, []string{"<CodMP>1</CodMP>", "<GlosaMP>Efectivo</GlosaMP>", "<NroLinMP>1</NroLinMP>", "<OrdenMP>1</OrdenMP>"}},
					{"e-Factura", run.Factura, 111, []string{"<DocRecep>214844360018</DocRecep>"}},
					{"credit note with referencias", run.Nota, 112, []string{"<NroLinRef>1</NroLinRef>", "<TpoDocRef>111</TpoDocRef>",
						"<NroCFERef>" + itoa(run.Factura.Nro) + "</NroCFERef>", "<RazonRef>Bonificación acordada</RazonRef>",
						"<FechaCFEref>" + cfe.DateOf(sdkEpoch.In(cfe.Montevideo)).String() + "</FechaCFEref>"}},
				} {
					t.Run(e.name, func(t *testing.T) {
						if e.got.CodRespuesta != "00" || e.got.TipoCfe != e.typ || e.got.Serie == "" || e.got.Nro == 0 || e.got.ID == 0 {
							t.Fatalf("response %+v", e.got)
						}
						doc := []byte(e.got.XmlFirmado)
						testtool.MustValidateXSD(t, xsd, doc)
						if out, ok := testtool.XMLSecVerify(t, doc, ""); !ok {
							t.Errorf("xmlsec1: %s", out)
						}
						if !strings.Contains(e.got.XmlFirmado, "<RUCEmisor>"+sdkRUC+"</RUCEmisor>") {
							t.Error("not the company of idEmpresa 0's user")
						}
						for _, w := range e.want {
							if !strings.Contains(e.got.XmlFirmado, w) {
								t.Errorf("the signed XML lacks %s", w)
							}
						}
					})
				}
				// valorPago 122: the 100.00 net of the e-Ticket's line with 22 % IVA.
				doc, err := cfe.ParseXML([]byte(run.Ticket.XmlFirmado))
				if err != nil {
					t.Fatal(err)
				}
				if mp := doc.MediosPago; len(mp) != 1 || mp[0].ValorPago.String() != "122" {
					t.Errorf("the e-Ticket's payment means %+v, want one of 122", mp)
				}
			})
			t.Run("the exceptions the SDK maps", func(t *testing.T) {
				for _, e := range []struct {
					name   string
					got    sdkFailure
					class  string
					status int
				}{
					{"400", run.E400, "ValidationException", 400},
					{"403 another company", run.E403, "ForbiddenException", 403},
					{"403 another company's PDF", run.E403pdf, "ForbiddenException", 403},
					{"404", run.E404, "NotFoundException", 404},
					{"409", run.E409, "IdempotencyConflictException", 409},
					{"429", run.E429, "RateLimitException", 429},
				} {
					t.Run(e.name, func(t *testing.T) {
						g := e.got
						if g.Class != `Bluetech\Sdk\Exceptions\`+e.class || g.Status != e.status || g.Message == "" {
							t.Errorf("exception %+v, want %s with status %d and a message", g, e.class, e.status)
						}
						if g.RequestID == "" || g.RequestID != g.Headers["X-Request-Id"] {
							t.Errorf("request id %q, header %q", g.RequestID, g.Headers["X-Request-Id"])
						}
					})
				}
				if d := run.E400.Details; run.E400.Code != "invalid" || len(d) == 0 || !strings.HasPrefix(d[0].Campo, "cfe.detalles") {
					t.Errorf("400: code %q details %+v, want invalid naming cfe.detalles", run.E400.Code, d)
				}
				if run.E403pdf.Message != "no tiene acceso a este CFE" {
					t.Errorf("403 PDF message %q", run.E403pdf.Message)
				}
				if len(run.LimitedFirst) != 1 {
					t.Errorf("the limited key's first request: %+v", run.LimitedFirst)
				}
				// The clock is at a whole minute: the window ends in 60 s.
				h := run.E429.Headers
				if run.E429.Code != "api_key_rate_limit_exceeded" || h["Retry-After"] != "60" || h["X-RateLimit-Limit-Minute"] != "1" ||
					h["X-RateLimit-Remaining-Minute"] != "0" || h["X-RateLimit-Limit-Hour"] != "100" || h["X-RateLimit-Remaining-Hour"] != "99" {
					t.Errorf("429: code %q headers %v", run.E429.Code, h)
				}
			})
		})
	}
}

// scenarioRun runs the scenario and decodes the JSON object it prints.
func scenarioRun(t *testing.T, php string, env []string, v any, args ...string) {
	t.Helper()
	out, code := runPHP(t, php, env, args...)
	if code != 0 {
		t.Fatalf("scenario %s exited %d:\n%s", args[2], code, out)
	}
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("scenario %s: %v\n%s", args[2], err, out)
	}
}

// emitForeign has the other company issue an e-Ticket and returns its uuid.
func emitForeign(t *testing.T, base string) string {
	t.Helper()
	const uuid = "ajena-1"
	body := `{"uuid":"` + uuid + `","cfe":{"idDoc":{"tipoCfe":101,"formaPago":1},
		"detalles":[{"indicadorFacturacion":3,"nombreItem":"Yerba","cantidad":1,"precioUnitario":100}]}}`
	req, _ := http.NewRequest(http.MethodPost, base+"/api/v1/comprobante/emitir", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-API-Key", foreignKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if b, _ := io.ReadAll(resp.Body); resp.StatusCode != http.StatusOK {
		t.Fatalf("the other company's e-Ticket: HTTP %d %s", resp.StatusCode, b)
	}
	return uuid
}

// jwtClaims decodes a JWT's payload (its signature is the sandbox's business).
func jwtClaims(t *testing.T, token string) map[string]any {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %q", token)
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	var claims map[string]any
	if err != nil || json.Unmarshal(raw, &claims) != nil {
		t.Fatalf("JWT payload %q: %v", parts[1], err)
	}
	return claims
}
