package profiles

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"
	"github.com/shopspring/decimal"
	"github.com/spf13/viper"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/durable"
)

// EnvPrefix starts the name of every environment variable the agent reads.
const EnvPrefix = "CFE_AGENT_"

// Environment variables that are not profile fields.
const (
	EnvDataDir = EnvPrefix + "DATA_DIR" // the data directory, when no --data-dir flag is given
	EnvProfile = EnvPrefix + "PROFILE"  // the active profile, instead of the file's "active"
)

// Overrides are values the command line gives (cfe-agent's --profile and
// --listen). They win over the environment and the file, and obey the same
// rules as values written in the file: a LAN address needs LAN mode and
// tokens, a profile must exist. The zero value overrides nothing.
type Overrides struct {
	// Profile is the active profile, instead of $CFE_AGENT_PROFILE and the
	// file's "active"; the other overrides then apply to it.
	Profile string
	// Listen is the active profile's listen address, instead of
	// $CFE_AGENT_LISTEN and the profile's listen.
	Listen string
}

// envOverrides are the environment variables that override a field of the
// active profile: EnvPrefix+name sets the profile key. Lists (LAN_TOKENS) are
// comma-separated. An empty variable overrides nothing.
var envOverrides = []struct{ name, key string }{
	{"ENVIRONMENT", "environment"},
	{"LISTEN", "listen"},
	{"LAN_ENABLED", "lan.enabled"},
	{"LAN_TOKENS", "lan.tokens"},
	{"COMPANY_FECHA_EMISOR", "company.fecha_emisor"},
	{"COMPANY_RESOLUCION", "company.resolucion"},
	{"COMPANY_WEB_URL", "company.web_url"},
	{"CERTIFICATE_PATH", "certificate.path"},
	{"CERTIFICATE_PASSWORD", "certificate.password"},
	{"DEFAULT_PRINTER", "default_printer"},
	{"PRINT_CONSTANCIA_IVA_AL_DIA", "print.constancia_iva_al_dia"},
	{"HOSTED_URL", "hosted.base_url"},
	{"HOSTED_API_KEY", "hosted.api_key"},
	{"HOSTED_USERNAME", "hosted.username"},
	{"HOSTED_SECRET", "hosted.secret"},
	{"HOSTED_TIMEOUT", "hosted.timeout"},
}

// profileDefaults are the values a profile gets for the keys config.yaml
// leaves out. Defaults are viper's, so an explicit 0 in the file stays 0. The
// tax rates and threshold are DGI's, as cfe states them; the UI value changes
// every year and has no default.
var profileDefaults = []struct {
	key   string
	value any
}{
	{"listen", DefaultListen},
	{"certificate.algorithm", string(RSASHA1)},
	{"cae.warn_remaining_pct", 10},
	{"cae.warn_days_before_expiry", 30},
	{"tax.iva_tasa_basica", cfe.DefaultTaxConfig().IVATasaBasica.String()},
	{"tax.iva_tasa_min", cfe.DefaultTaxConfig().IVATasaMin.String()},
	{"tax.tope_ui", cfe.DefaultTaxConfig().TopeUI.String()},
	{"print.formato_rep_impresa", string(FormatEstandar)},
	{"print.constancia_iva_al_dia", true},
	{"hosted.timeout", "30s"},
}

// DataDir returns the data directory: flagValue when it is not empty, else
// $CFE_AGENT_DATA_DIR, else cfe-agent in the user's configuration directory.
// The result is absolute.
func DataDir(flagValue string) (string, error) {
	dir := flagValue
	if dir == "" {
		dir = os.Getenv(EnvDataDir)
	}
	if dir == "" {
		base, err := os.UserConfigDir()
		if err != nil {
			return "", fmt.Errorf("profiles: no data directory given and no user configuration directory: %w", err)
		}
		dir = filepath.Join(base, "cfe-agent")
	}
	return filepath.Abs(dir)
}

// Load reads dataDir/config.yaml, applies the environment overrides to the
// active profile, fills defaults and validates every profile.
//
// The active profile is the file's "active", or $CFE_AGENT_PROFILE. Its fields
// are overridden by CFE_AGENT_ENVIRONMENT, CFE_AGENT_LISTEN,
// CFE_AGENT_LAN_ENABLED, CFE_AGENT_LAN_TOKENS, CFE_AGENT_COMPANY_FECHA_EMISOR,
// CFE_AGENT_COMPANY_RESOLUCION, CFE_AGENT_COMPANY_WEB_URL,
// CFE_AGENT_CERTIFICATE_PATH, CFE_AGENT_CERTIFICATE_PASSWORD,
// CFE_AGENT_DEFAULT_PRINTER, CFE_AGENT_PRINT_CONSTANCIA_IVA_AL_DIA,
// CFE_AGENT_HOSTED_URL, CFE_AGENT_HOSTED_API_KEY, CFE_AGENT_HOSTED_USERNAME,
// CFE_AGENT_HOSTED_SECRET and CFE_AGENT_HOSTED_TIMEOUT.
//
// Errors: ENOTFOUND when config.yaml does not exist; EINVALID when it is not
// YAML, has unknown keys or values of the wrong type, or breaks a rule of
// Validate (each named in Fields); any other error is internal (unreadable file).
func Load(dataDir string) (*Config, error) { return LoadWith(dataDir, Overrides{}) }

// LoadWith is Load with the command line's overrides applied last, over the
// environment's. A Profile naming no profile of the file is EINVALID, as
// $CFE_AGENT_PROFILE naming none is.
func LoadWith(dataDir string, o Overrides) (*Config, error) {
	const op = "profiles.Load"
	cfg, unknown, err := read(op, dataDir, &o)
	if err != nil {
		return nil, err
	}
	if err := cfg.validate(op, unknown...); err != nil {
		return nil, fromEnv(err, cfg.Active, o)
	}
	return cfg, nil
}

// fromEnv names, in the message of each broken rule of the active profile
// whose value an environment variable gave, that variable: the technician
// would otherwise look for it in config.yaml.
func fromEnv(err error, active string, o Overrides) error {
	var e *cfe.Error
	if !errors.As(err, &e) {
		return err
	}
	for i, f := range e.Fields {
		for _, env := range envOverrides {
			key := "profiles." + active + "." + env.key
			if f.Campo != key && !strings.HasPrefix(f.Campo, key+"[") || os.Getenv(EnvPrefix+env.name) == "" ||
				env.key == "listen" && o.Listen != "" {
				continue
			}
			e.Fields[i].Mensaje += " (valor de " + EnvPrefix + env.name + ")"
		}
	}
	if len(e.Fields) == 1 {
		e.Message = e.Fields[0].Campo + ": " + e.Fields[0].Mensaje
	}
	return e
}

// read decodes dataDir/config.yaml with defaults filled in, and with the
// environment's and over's overrides when over is not nil (nil: the file
// alone). It does not validate: it returns the keys it does not know, for
// validate to report with the broken rules.
func read(op, dataDir string, over *Overrides) (cfg *Config, unknown []cfe.FieldError, err error) {
	path := filepath.Join(dataDir, FileName)
	v := viper.New()
	v.SetConfigType("yaml")
	raw, err := durable.ReadFile(path) // not v.ReadInConfig: Windows needs durable.ReadFile's retries
	if err != nil {
		return nil, nil, readError(op, path, err)
	}
	if err := v.ReadConfig(bytes.NewReader(raw)); err != nil {
		return nil, nil, readError(op, path, err)
	}
	names := v.GetStringMap("profiles")
	if over != nil {
		if err := bindEnv(op, v, names, *over); err != nil {
			return nil, nil, err
		}
	}
	for name := range names {
		for _, d := range profileDefaults {
			v.SetDefault("profiles."+name+"."+d.key, d.value)
		}
	}

	cfg = &Config{}
	var md mapstructure.Metadata
	if err := v.Unmarshal(cfg, func(dc *mapstructure.DecoderConfig) {
		dc.TagName = "yaml"
		dc.Metadata = &md
		dc.DecodeHook = mapstructure.ComposeDecodeHookFunc(decimalHook, durationHook, dateHook, splitHook)
	}); err != nil {
		fields := decodeFields(err)
		// mapstructure walks maps in random order.
		slices.SortFunc(fields, func(a, b cfe.FieldError) int { return strings.Compare(a.Campo, b.Campo) })
		if over != nil {
			return nil, nil, fromEnv(invalid(op, fields), strings.ToLower(v.GetString("active")), *over)
		}
		return nil, nil, invalid(op, fields)
	}
	slices.Sort(md.Unused)
	for _, k := range md.Unused {
		unknown = append(unknown, cfe.FieldError{Campo: keyPath(k), Mensaje: "clave desconocida"})
	}
	cfg.Active = strings.ToLower(cfg.Active)
	return cfg, unknown, nil
}

// bindEnv binds CFE_AGENT_PROFILE to the active profile's name, and the
// override variables to that profile's keys; over's values are set above
// both (viper's Set wins over its environment).
func bindEnv(op string, v *viper.Viper, profiles map[string]any, over Overrides) error {
	if err := v.BindEnv("active", EnvProfile); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	chosen := os.Getenv(EnvProfile)
	if over.Profile != "" {
		v.Set("active", over.Profile)
		chosen = over.Profile
	}
	active := strings.ToLower(v.GetString("active"))
	if _, ok := profiles[active]; !ok {
		if chosen != "" {
			// Named as the variable, whether it came from the environment or
			// from --profile, which used to set the variable.
			return invalid(op, []cfe.FieldError{{Campo: EnvProfile,
				Mensaje: fmt.Sprintf("el perfil %q no existe en %s", chosen, FileName)}})
		}
		return nil // Validate reports the missing or unknown active profile
	}
	for _, o := range envOverrides {
		if err := v.BindEnv("profiles."+active+"."+o.key, EnvPrefix+o.name); err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
	}
	if over.Listen != "" {
		v.Set("profiles."+active+".listen", over.Listen)
	}
	return nil
}

var yamlLine = regexp.MustCompile(`line (\d+)`)

// readError explains why config.yaml could not be read.
func readError(op, path string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return &cfe.Error{Code: cfe.ENOTFOUND, Op: op, Err: err,
			Message: fmt.Sprintf("no existe el archivo de configuración %s", path)}
	}
	var parse viper.ConfigParseError
	if errors.As(err, &parse) {
		msg := FileName + " no es un YAML válido"
		if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
			msg += " (línea " + m[1] + ")"
		}
		return &cfe.Error{Code: cfe.EINVALID, Op: op, Message: msg, Err: err,
			Fields: []cfe.FieldError{{Campo: FileName, Mensaje: msg}}}
	}
	return fmt.Errorf("%s: reading %s: %w", op, path, err)
}

// hookError is a decode hook's failure, already in Spanish.
type hookError string

func (e hookError) Error() string { return string(e) }

var (
	decimalType  = reflect.TypeFor[decimal.Decimal]()
	durationType = reflect.TypeFor[time.Duration]()
	dateType     = reflect.TypeFor[Date]()
)

// decimalHook decodes a decimal from a string or a YAML number. YAML parses an
// unquoted 6.1234 as a float64; formatting it with the fewest digits that
// read back the same float gives back the digits that were written.
func decimalHook(_, to reflect.Type, data any) (any, error) {
	if to != decimalType {
		return data, nil
	}
	var s string
	switch x := data.(type) {
	case string:
		s = strings.TrimSpace(x)
	case int:
		s = strconv.Itoa(x)
	case int64:
		s = strconv.FormatInt(x, 10)
	case uint64:
		s = strconv.FormatUint(x, 10)
	case float64:
		s = strconv.FormatFloat(x, 'f', -1, 64)
	case decimal.Decimal:
		return x, nil
	}
	d, err := decimal.NewFromString(s)
	if err != nil {
		return nil, hookError("se espera un número decimal, por ejemplo 22 o 6.1234")
	}
	return d, nil
}

// durationHook decodes a duration written as text, such as 30s or 1m.
func durationHook(from, to reflect.Type, data any) (any, error) {
	if to != durationType || from.Kind() != reflect.String {
		return data, nil
	}
	d, err := time.ParseDuration(strings.TrimSpace(reflect.ValueOf(data).String()))
	if err != nil {
		return nil, hookError("se espera una duración como 30s o 1m")
	}
	return d, nil
}

// dateHook decodes a date written AAAA-MM-DD. YAML leaves an unquoted
// 2012-10-01 as text for an untyped value, as viper reads the file; a
// time.Time is taken too, in case a decoder does resolve it.
func dateHook(_, to reflect.Type, data any) (any, error) {
	if to != dateType {
		return data, nil
	}
	switch x := data.(type) {
	case string:
		if d, err := cfe.ParseDate(strings.TrimSpace(x)); err == nil {
			return Date{d}, nil
		}
	case time.Time:
		return Date{cfe.DateOf(x)}, nil
	case Date:
		return x, nil
	}
	return nil, hookError("se espera una fecha AAAA-MM-DD, por ejemplo 2012-10-01")
}

// splitHook decodes a list given as one comma-separated text, as environment
// variables give lists.
func splitHook(from, to reflect.Type, data any) (any, error) {
	if from.Kind() != reflect.String || to.Kind() != reflect.Slice {
		return data, nil
	}
	var items []string
	for item := range strings.SplitSeq(reflect.ValueOf(data).String(), ",") {
		if item = strings.TrimSpace(item); item != "" {
			items = append(items, item)
		}
	}
	return items, nil
}

// decodeFields turns mapstructure's errors (a tree of wrapped and joined
// errors) into field errors.
func decodeFields(err error) []cfe.FieldError {
	switch e := err.(type) { //nolint:errorlint // walks the tree of wrapped errors itself
	case interface{ Unwrap() []error }:
		var fields []cfe.FieldError
		for _, inner := range e.Unwrap() {
			fields = append(fields, decodeFields(inner)...)
		}
		return fields
	case *mapstructure.DecodeError:
		return []cfe.FieldError{{Campo: keyPath(e.Name()), Mensaje: typeMessage(e.Unwrap())}}
	}
	if inner := errors.Unwrap(err); inner != nil {
		return decodeFields(inner)
	}
	return []cfe.FieldError{{Campo: FileName, Mensaje: "valor de tipo incorrecto"}}
}

// typeMessage says in Spanish what kind of value a field expects.
func typeMessage(err error) string {
	var he hookError
	if errors.As(err, &he) {
		return string(he)
	}
	var expected reflect.Value
	var pe *mapstructure.ParseError
	var ue *mapstructure.UnconvertibleTypeError
	switch {
	case errors.As(err, &pe):
		expected = pe.Expected
	case errors.As(err, &ue):
		expected = ue.Expected
	default:
		return "valor de tipo incorrecto"
	}
	switch expected.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "se espera un número entero"
	case reflect.Bool:
		return "se espera true o false"
	case reflect.String:
		return "se espera un texto"
	case reflect.Slice:
		return "se espera una lista"
	default:
		return "se espera una sección con claves"
	}
}

var mapKey = regexp.MustCompile(`\[([^\]]*[^0-9\]][^\]]*)\]`)

// keyPath writes a mapstructure field name as a path in config.yaml: names
// after dots, list indexes and CFE type codes in brackets
// ("profiles[caja1].lan.tokens[0]" becomes "profiles.caja1.lan.tokens[0]").
func keyPath(name string) string { return mapKey.ReplaceAllString(name, ".$1") }
