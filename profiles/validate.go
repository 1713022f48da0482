package profiles

import (
	"fmt"
	"maps"
	"net/mail"
	"net/netip"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/shopspring/decimal"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// apiKeyPrefixes are the hosted service's API key prefixes per environment.
var apiKeyPrefixes = map[Environment]string{Produccion: "xx_live_", Sandbox: "xx_test_"}

const (
	maxCopies   = 10
	maxLeyenda  = 300
	minFontSize = 6
	maxFontSize = 14
	maxWarnDays = 365
	minTimeout  = time.Second
	maxTimeout  = 5 * time.Minute
)

// nameRule is the shape of profile, printer and template names: they become
// viper keys, which are case-insensitive and split at dots.
var nameRule = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,31}$`)

const nameRuleText = "use de 1 a 32 minúsculas, dígitos, - o _ (empezando por letra o dígito)"

// Validate checks every profile of c and returns an EINVALID *cfe.Error whose
// Fields name each broken rule by its path in config.yaml, or nil when c is
// valid. Paths write names after dots, and list indexes and CFE type codes in
// brackets: profiles.caja1.company.ruc, profiles.caja1.lan.tokens[0],
// profiles.caja1.printers.mostrador.copies[111].
//
// Validate does not look at files: a certificate or CAE file that does not
// exist yet (the sandbox certificate is generated on first run) is not an error.
func (c *Config) Validate() error { return c.validate("profiles.Validate") }

// validate checks c; known are broken rules found before, such as unknown keys.
func (c *Config) validate(op string, known ...cfe.FieldError) error {
	v := &validator{fields: known}
	v.config(c)
	return v.result(op)
}

// validator collects the broken rules of a configuration.
type validator struct {
	fields []cfe.FieldError
}

func (v *validator) fail(field, format string, args ...any) {
	v.fields = append(v.fields, cfe.FieldError{Campo: field, Mensaje: fmt.Sprintf(format, args...)})
}

func (v *validator) result(op string) error {
	if len(v.fields) == 0 {
		return nil
	}
	return invalid(op, v.fields)
}

// invalid builds the EINVALID error of a configuration with broken rules.
func invalid(op string, fields []cfe.FieldError) *cfe.Error {
	msg := fmt.Sprintf("la configuración tiene %d errores", len(fields))
	if len(fields) == 1 {
		msg = fields[0].Campo + ": " + fields[0].Mensaje
	}
	return &cfe.Error{Code: cfe.EINVALID, Op: op, Message: msg, Fields: fields}
}

func (v *validator) config(c *Config) {
	if len(c.Profiles) == 0 {
		v.fail("profiles", "defina al menos un perfil")
		return
	}
	names := slices.Sorted(maps.Keys(c.Profiles))
	switch _, ok := c.Profile(c.Active); {
	case c.Active == "":
		v.fail("active", "indique el perfil activo (perfiles: %s)", strings.Join(names, ", "))
	case !ok:
		v.fail("active", "el perfil %q no existe (perfiles: %s)", c.Active, strings.Join(names, ", "))
	}
	for _, name := range names {
		at := "profiles." + name
		if !nameRule.MatchString(name) {
			v.fail(at, "nombre de perfil inválido: %s", nameRuleText)
		}
		v.profile(at, c.Profiles[name])
	}
}

func (v *validator) profile(at string, p Profile) {
	if p.Environment != Produccion && p.Environment != Sandbox {
		v.fail(at+".environment", "se espera %q o %q", Produccion, Sandbox)
	}
	v.company(at+".company", p)
	v.issuingPoint(at+".issuing_point", p.IssuingPoint)
	v.listen(at, p)
	v.lan(at+".lan", strings.TrimPrefix(at, "profiles."), p)
	for i, o := range p.AllowedOrigins {
		v.origin(fmt.Sprintf("%s.allowed_origins[%d]", at, i), o)
	}
	v.certificate(at+".certificate", p.Certificate)
	v.cae(at+".cae", p.CAE)
	v.tax(at+".tax", p.Tax)
	v.backup(at+".backup", p.Backup)
	v.printers(at, p)
	v.print(at+".print", p.Print)
	v.archive(at+".archive", p.Archive)
	v.hosted(at+".hosted", p.Environment, p.Hosted)
	v.dgi(at+".dgi", p.DGI)
	v.caja(at+".caja", p.Caja)
}

// company checks the emitter fields with DGI's rules (cfe.CheckEmisor, zone A
// C40-C51), that every phone listed and the e-mail address are real ones, and
// the printed footer's data (cfe.CheckFooter).
func (v *validator) company(at string, p Profile) {
	for _, f := range cfe.CheckEmisor(p.Emisor()) {
		v.fail(at+"."+companyKey(f.Campo), "%s", f.Mensaje)
	}
	c := p.Company
	for i, t := range c.Telefonos {
		if strings.TrimSpace(t) == "" {
			v.fail(fmt.Sprintf("%s.telefonos[%d]", at, i), "es obligatorio")
		}
	}
	if c.Correo != "" {
		if a, err := mail.ParseAddress(c.Correo); err != nil || a.Address != c.Correo {
			v.fail(at+".correo", "se espera una dirección de correo como ventas@empresa.com.uy")
		}
	}
	// The printed footer's data: Fecha emisor or resolution, and web site.
	for _, f := range cfe.CheckFooter(c.FechaEmisor.Date, c.Resolucion, c.WebURL) {
		v.fail(at+"."+companyKey(f.Campo), "%s", f.Mensaje)
	}
}

// companyKeys maps the emitter's field names in a request (cfe.CheckEmisor)
// and the footer's (cfe.CheckFooter) to the company's keys in config.yaml.
var companyKeys = map[string]string{
	"ruc": "ruc", "razonSocial": "razon_social", "nombreComercial": "nombre_comercial", "giro": "giro",
	"telefonos": "telefonos", "correo": "correo", "sucursal": "sucursal", "codigoSucursal": "cdg_dgi_sucur",
	"domicilioFiscal": "domicilio_fiscal", "ciudad": "ciudad", "departamento": "departamento",
	"fechaEmisor": "fecha_emisor", "resolucion": "resolucion", "webUrl": "web_url",
}

// companyKey returns the config.yaml key of a request field name, keeping an
// index ("telefonos[1]"); a name without a key is returned as it is.
func companyKey(campo string) string {
	name, index, _ := strings.Cut(campo, "[")
	key, ok := companyKeys[name]
	if !ok {
		return campo
	}
	if index != "" {
		key += "[" + index
	}
	return key
}

func (v *validator) issuingPoint(at string, ip IssuingPoint) {
	for _, f := range []struct {
		key string
		n   int64
	}{{"id_pde", ip.IdPde}, {"empresa", ip.Empresa}, {"sucursal", ip.Sucursal}} {
		if f.n < 0 {
			v.fail(at+"."+f.key, "no puede ser negativo")
		}
	}
	for _, t := range slices.Sorted(maps.Keys(ip.RangosCAE)) {
		field := fmt.Sprintf("%s.rangos_cae[%d]", at, int(t))
		if info, ok := t.Info(); !ok || info.Contingency {
			v.fail(field, "tipo de CFE desconocido: se espera un tipo electrónico como 101 o 111")
		}
		if ip.RangosCAE[t] < 0 {
			v.fail(field, "no puede ser negativo")
		}
	}
}

func (v *validator) listen(at string, p Profile) {
	field := at + ".listen"
	ap, err := netip.ParseAddrPort(p.Listen)
	if err != nil {
		v.fail(field, "se espera IP:puerto, por ejemplo %s, una IP de la red local o 0.0.0.0:18787", DefaultListen)
		return
	}
	// Port 0 is allowed: the system picks a free port and base_url reports it
	// (scripted set-ups, tests, the load tool).
	if !ap.Addr().IsLoopback() && !p.LAN.Enabled {
		v.fail(field, "escuchar en %s abre el módulo a la red: active lan.enabled y defina un token por terminal", ap.Addr())
	}
}

// lan checks LAN mode: each terminal's token must be its own, one that can
// travel in a header, and hold MinLANTokenBits of chance (rateToken), which
// also refuses the example tokens and tokens built from the profile's data.
// Messages never show a token, nor a part of one.
func (v *validator) lan(at, name string, p Profile) {
	l := p.LAN
	if l.Enabled && len(l.Tokens) == 0 {
		v.fail(at+".tokens", "con lan.enabled se requiere al menos un token por terminal")
	}
	known := profileWords(name, p)
	seen := make(map[Secret]bool, len(l.Tokens))
	for i, tok := range l.Tokens {
		field := fmt.Sprintf("%s.tokens[%d]", at, i)
		switch {
		case utf8.RuneCountInString(string(tok)) > maxTokenLen:
			v.fail(field, "el token admite a lo sumo %d caracteres", maxTokenLen)
		case strings.ContainsFunc(string(tok), func(r rune) bool { return unicode.IsSpace(r) || r == ',' || unicode.IsControl(r) }):
			v.fail(field, "el token no puede contener espacios, comas ni caracteres de control")
		case seen[tok]:
			v.fail(field, "token repetido: cada terminal necesita el suyo")
		case isExampleToken(string(tok)):
			v.fail(field, "es un token de ejemplo (de config.yaml o de la documentación): genere uno propio con «cfe-agent lan token»")
		default:
			if bits, why := rateToken(string(tok), known); bits < MinLANTokenBits {
				v.fail(field, "token débil: %s; se estiman %d bits de azar y se requieren al menos %d: genere uno con «cfe-agent lan token»",
					reasons[why], int(bits), MinLANTokenBits)
			}
		}
		seen[tok] = true
	}
	for i, h := range l.AllowedHosts {
		if !validHost(h) {
			v.fail(fmt.Sprintf("%s.allowed_hosts[%d]", at, i), "se espera un nombre de host o una IP, sin esquema ni puerto")
		}
	}
}

// validHost reports whether h is an IP address or a DNS name.
func validHost(h string) bool {
	if _, err := netip.ParseAddr(h); err == nil {
		return true
	}
	if h == "" || len(h) > 253 {
		return false
	}
	for label := range strings.SplitSeq(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
				return false
			}
		}
	}
	return true
}

// origin checks a browser origin: scheme, host and optional port, nothing else.
func (v *validator) origin(field, o string) {
	if o == "*" {
		v.fail(field, "no se admite *: indique cada origen permitido")
		return
	}
	u, err := url.Parse(o)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" ||
		u.User != nil || u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		v.fail(field, "se espera un origen como https://pos.ejemplo.com o http://localhost:3000 (sin ruta)")
	}
}

func (v *validator) certificate(at string, c Certificate) {
	if c.Path == "" {
		v.fail(at+".path", "indique el certificado de firma (.p12, .pfx o .pem)")
	} else {
		switch strings.ToLower(filepath.Ext(c.Path)) {
		case ".p12", ".pfx":
			if c.KeyPath != "" {
				v.fail(at+".key_path", "solo se usa con certificados PEM: un .p12 o .pfx ya incluye la clave")
			}
		case ".pem", ".crt", ".cer":
		default:
			v.fail(at+".path", "extensión no reconocida: se espera .p12, .pfx, .pem, .crt o .cer")
		}
	}
	if c.Algorithm != RSASHA1 && c.Algorithm != RSASHA256 {
		v.fail(at+".algorithm", "se espera %q o %q", RSASHA1, RSASHA256)
	}
}

func (v *validator) cae(at string, c CAE) {
	for i, f := range c.Files {
		if !strings.EqualFold(filepath.Ext(f), ".xml") {
			v.fail(fmt.Sprintf("%s.files[%d]", at, i), "se espera un archivo de CAE de DGI (.xml)")
		}
	}
	if c.WarnRemainingPct < 0 || c.WarnRemainingPct > 100 {
		v.fail(at+".warn_remaining_pct", "debe estar entre 0 y 100")
	}
	if c.WarnDaysBeforeExpiry < 0 || c.WarnDaysBeforeExpiry > maxWarnDays {
		v.fail(at+".warn_days_before_expiry", "debe estar entre 0 y %d", maxWarnDays)
	}
}

func (v *validator) tax(at string, t Tax) {
	hundred := decimal.NewFromInt(100)
	rate := func(key string, d decimal.Decimal) bool {
		if !d.IsPositive() || d.GreaterThanOrEqual(hundred) || !hasDecimals(d, 3) {
			v.fail(at+"."+key, "se espera un porcentaje mayor que 0 y menor que 100, con hasta 3 decimales")
			return false
		}
		return true
	}
	basica := rate("iva_tasa_basica", t.IVATasaBasica)
	if rate("iva_tasa_min", t.IVATasaMin) && basica && t.IVATasaMin.GreaterThanOrEqual(t.IVATasaBasica) {
		v.fail(at+".iva_tasa_min", "debe ser menor que iva_tasa_basica")
	}
	if !t.TopeUI.IsPositive() || !hasDecimals(t.TopeUI, 0) {
		v.fail(at+".tope_ui", "se espera una cantidad entera de UI mayor que 0")
	}
	if !t.ValorUI.IsPositive() || !hasDecimals(t.ValorUI, 4) {
		v.fail(at+".valor_ui", "indique el valor de la UI en pesos al cierre del año anterior (mayor que 0, hasta 4 decimales)")
	}
}

// hasDecimals reports whether d has at most places decimal places.
func hasDecimals(d decimal.Decimal, places int32) bool { return d.Equal(d.Truncate(places)) }

func (v *validator) printers(at string, p Profile) {
	for _, alias := range slices.Sorted(maps.Keys(p.Printers)) {
		v.printer(at+".printers."+alias, alias, p.Printers[alias])
	}
	if p.DefaultPrinter != "" {
		if _, ok := p.Printers[strings.ToLower(p.DefaultPrinter)]; !ok {
			v.fail(at+".default_printer", "la impresora %q no está definida en printers", p.DefaultPrinter)
		}
	}
}

func (v *validator) printer(at, alias string, pr Printer) {
	if !nameRule.MatchString(alias) {
		v.fail(at, "nombre de impresora inválido: %s", nameRuleText)
	}
	switch pr.Backend {
	case BackendCUPS, BackendLP, BackendWindows:
		if strings.TrimSpace(pr.Queue) == "" {
			v.fail(at+".queue", "indique la cola o el nombre de la impresora")
		}
	case BackendDir:
		if strings.TrimSpace(pr.Dir) == "" {
			v.fail(at+".dir", "indique la carpeta donde se guardan los PDF")
		}
	case BackendTCP:
		if strings.TrimSpace(pr.Address) == "" {
			v.fail(at+".address", "indique la dirección de la impresora, como 192.168.1.50:9100")
		}
	case BackendDevice:
		if strings.TrimSpace(pr.Device) == "" {
			v.fail(at+".device", "indique el dispositivo, como /dev/usb/lp0 o COM3")
		}
	default:
		v.fail(at+".backend", "se espera %s, %s, %s, %s, %s o %s", BackendCUPS, BackendLP, BackendDir, BackendWindows,
			BackendTCP, BackendDevice)
	}
	if pr.Address != "" && pr.Backend != BackendTCP {
		v.fail(at+".address", "solo se usa con backend %s", BackendTCP)
	}
	if pr.Device != "" && pr.Backend != BackendDevice {
		v.fail(at+".device", "solo se usa con backend %s", BackendDevice)
	}
	v.protocol(at, pr)
	if pr.SumatraPath != "" && pr.Backend != BackendWindows {
		v.fail(at+".sumatra_path", "solo se usa con backend %s", BackendWindows)
	}
	for _, t := range slices.Sorted(maps.Keys(pr.Copies)) {
		field := fmt.Sprintf("%s.copies[%d]", at, int(t))
		if !t.Valid() {
			v.fail(field, "tipo de CFE desconocido")
		}
		if n := pr.Copies[t]; n < 1 || n > maxCopies {
			v.fail(field, "las copias deben estar entre 1 y %d", maxCopies)
		}
	}
	if pr.DefaultCopies < 0 || pr.DefaultCopies > maxCopies {
		v.fail(at+".default_copies", "debe estar entre 0 (una copia) y %d", maxCopies)
	}
}

// protocol checks a printer's protocol and, for escpos, its options.
func (v *validator) protocol(at string, pr Printer) {
	switch pr.Protocol {
	case "", ProtocolPDF:
		if pr.Backend == BackendTCP || pr.Backend == BackendDevice {
			v.fail(at+".protocol", "el backend %s solo imprime %s: indique protocol: %s", pr.Backend, ProtocolESCPOS,
				ProtocolESCPOS)
		}
		if pr.ESCPOS != (ESCPOS{}) {
			v.fail(at+".escpos", "solo se usa con protocol: %s", ProtocolESCPOS)
		}
		return
	case ProtocolESCPOS:
		if pr.Backend == BackendDir {
			v.fail(at+".protocol", "%s se envía con los backends %s, %s, %s, %s o %s", ProtocolESCPOS, BackendTCP,
				BackendDevice, BackendCUPS, BackendLP, BackendWindows)
		}
	default:
		v.fail(at+".protocol", "se espera %s o %s", ProtocolPDF, ProtocolESCPOS)
		return
	}
	if pr.Media != "" {
		v.fail(at+".media", "no se usa con protocol: %s (el papel lo dice escpos.paper_mm)", ProtocolESCPOS)
	}
	e, at := pr.ESCPOS, at+".escpos"
	switch e.PaperMM {
	case 0, 80:
		if e.Columns != 0 && e.Columns != 48 && e.Columns != 42 {
			v.fail(at+".columns", "en papel de 80 mm se espera 48 o 42 columnas")
		}
	case 58:
		if e.Columns != 0 && e.Columns != 32 {
			v.fail(at+".columns", "en papel de 58 mm se espera 32 columnas")
		}
	default:
		v.fail(at+".paper_mm", "se espera 80 o 58 (milímetros)")
	}
	if cp := strings.ToLower(e.CodePage); cp != "" && !slices.Contains(escposCodePages, cp) {
		v.fail(at+".code_page", "se espera %s", strings.Join(escposCodePages, ", "))
	}
	if e.CodeTable < 0 || e.CodeTable > 255 {
		v.fail(at+".code_table", "debe estar entre 0 (el número de Epson) y 255")
	}
	if e.DPI != 0 && (e.DPI < 150 || e.DPI > 600) {
		v.fail(at+".dpi", "debe estar entre 150 y 600 puntos por pulgada (203 en la mayoría)")
	}
	if e.QR != "" && e.QR != "native" && e.QR != "raster" {
		v.fail(at+".qr", "se espera native (el comando QR de la impresora) o raster (imagen)")
	}
	if e.Cut != "" && e.Cut != "partial" && e.Cut != "full" && e.Cut != "none" {
		v.fail(at+".cut", "se espera partial, full o none")
	}
	if e.Status != nil && *e.Status && pr.Backend != BackendTCP && pr.Backend != BackendDevice {
		v.fail(at+".status", "el estado (DLE EOT) solo se consulta con los backends %s y %s", BackendTCP, BackendDevice)
	}
}

// escposCodePages are the code pages of escpos.code_page.
var escposCodePages = []string{"cp858", "cp850", "cp437", "cp1252"}

func (v *validator) print(at string, p Print) {
	if _, custom := p.Templates[strings.ToLower(p.FormatoRepImpresa)]; !custom && !builtIn(p.FormatoRepImpresa) {
		v.fail(at+".formato_rep_impresa", "se espera %s o el nombre de una plantilla definida en templates", formatList())
	}
	for _, name := range slices.Sorted(maps.Keys(p.Templates)) {
		field, t := at+".templates."+name, p.Templates[name]
		if !nameRule.MatchString(name) {
			v.fail(field, "nombre de plantilla inválido: %s", nameRuleText)
		}
		if builtIn(name) {
			v.fail(field, "el nombre coincide con un formato incorporado: elija otro")
		}
		if !slices.Contains(formats, t.Base) {
			v.fail(field+".base", "se espera %s", formatList())
		}
		if t.Logo != "" {
			if ext := strings.ToLower(filepath.Ext(t.Logo)); ext != ".png" && ext != ".jpg" && ext != ".jpeg" {
				v.fail(field+".logo", "se espera una imagen .png o .jpg")
			}
		}
		if utf8.RuneCountInString(t.Leyenda) > maxLeyenda {
			v.fail(field+".leyenda", "admite a lo sumo %d caracteres", maxLeyenda)
		}
		if t.FontSize != 0 && (t.FontSize < minFontSize || t.FontSize > maxFontSize) {
			v.fail(field+".font_size", "debe ser 0 (el de la base) o estar entre %d y %d", minFontSize, maxFontSize)
		}
	}
}

// builtIn reports whether name is a built-in Format (case-insensitive).
func builtIn(name string) bool {
	return slices.ContainsFunc(formats, func(f Format) bool { return strings.EqualFold(name, string(f)) })
}

func formatList() string {
	return fmt.Sprintf("%s, %s o %s", FormatEstandar, FormatRollo, FormatRollo58)
}

func (v *validator) hosted(at string, env Environment, h Hosted) {
	if h.BaseURL != "" {
		u, err := url.Parse(h.BaseURL)
		switch {
		case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
			u.User != nil || u.RawQuery != "" || u.Fragment != "":
			v.fail(at+".base_url", "se espera una URL como https://servicio.ejemplo.com")
		case env == Produccion && u.Scheme != "https":
			v.fail(at+".base_url", "en %s se requiere https", Produccion)
		}
	}
	// An unknown environment is reported once, by profile: no key can match it.
	if prefix, ok := apiKeyPrefixes[env]; ok && h.APIKey != "" {
		if k := h.APIKey.Value(); !strings.HasPrefix(k, prefix) || len(k) == len(prefix) {
			// Never echo the key: only its required prefix.
			v.fail(at+".api_key", "en el entorno %s la API key debe empezar con %s", env, prefix)
		}
	}
	switch {
	case h.Username != "" && h.Secret == "":
		v.fail(at+".secret", "es obligatorio cuando se indica username")
	case h.Username == "" && h.Secret != "":
		v.fail(at+".username", "es obligatorio cuando se indica secret")
	}
	if h.BaseURL == "" && (h.APIKey != "" || h.Username != "") {
		v.fail(at+".base_url", "es obligatorio cuando hay credenciales del servicio")
	}
	if h.Timeout < minTimeout || h.Timeout > maxTimeout {
		v.fail(at+".timeout", "debe estar entre %s y %s", minTimeout, maxTimeout)
	}
}
