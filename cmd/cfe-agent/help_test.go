package main_test

import (
	"regexp"
	"strings"
	"testing"
)

// cobraEnglish are the words of cobra's and pflag's own texts.
var cobraEnglish = []string{"Usage:", "Flags:", "Global Flags", "Available Commands", "Additional Commands",
	"Additional help topics", "for more information about a command", "help for ", "version for ", "(default",
	"[flags]", "[command]", "Aliases:", "Examples:", "Help about any command", "completion"}

// englishWords and spanishWords tell a flag's description apart: it must
// use Spanish function words and none of English's.
var (
	englishWords = map[string]bool{"the": true, "of": true, "for": true, "to": true, "with": true, "and": true,
		"or": true, "file": true, "directory": true, "default": true, "instead": true, "only": true, "when": true,
		"write": true, "run": true, "without": true, "from": true, "that": true, "this": true, "which": true,
		"password": true, "first": true, "last": true, "report": true, "like": true, "not": true, "is": true,
		"help": true, "version": true, "listen": true, "address": true}
	spanishWords = map[string]bool{"de": true, "la": true, "el": true, "los": true, "las": true, "del": true,
		"en": true, "que": true, "un": true, "una": true, "para": true, "con": true, "por": true, "sin": true,
		"se": true, "al": true, "su": true, "esta": true, "este": true, "y": true, "o": true, "a": true}
	wordRE = regexp.MustCompile(`\pL+`)
	// optionRE reads a line of an options section: the flag, then its
	// description after three or more spaces.
	optionRE = regexp.MustCompile(`^\s+(-\S.*?)\s{3,}(.*)$`)
)

// helpSections splits a help text into its sections by heading.
func helpSections(help string) map[string][]string {
	sections := map[string][]string{}
	current := ""
	for _, line := range strings.Split(help, "\n") {
		if line != "" && !strings.HasPrefix(line, " ") && strings.HasSuffix(line, ":") {
			current = strings.TrimSuffix(line, ":")
			continue
		}
		if strings.TrimSpace(line) == "" {
			continue
		}
		if !strings.HasPrefix(line, " ") {
			current = "" // prose: the description, the closing hint
			continue
		}
		sections[current] = append(sections[current], line)
	}
	return sections
}

// TestCLI_HelpInSpanish: --help of every command is Spanish: cobra's
// template words are translated, and every option has a Spanish
// description.
func TestCLI_HelpInSpanish(t *testing.T) {
	env := agentEnv("CFE_AGENT_DATA_DIR=" + t.TempDir())
	queue := [][]string{{}}
	seen := 0
	for len(queue) > 0 {
		path := queue[0]
		queue = queue[1:]
		name := strings.Join(append([]string{"cfe-agent"}, path...), " ")
		out, code := runCLI(t, env, append(append([]string{}, path...), "--help")...)
		seen++
		if code != 0 || !strings.Contains(out, "Uso:\n") {
			t.Errorf("%s --help: exit %d\n%s", name, code, out)
			continue
		}
		for _, w := range cobraEnglish {
			if strings.Contains(out, w) {
				t.Errorf("%s --help has cobra's English %q:\n%s", name, w, out)
			}
		}
		sections := helpSections(out)
		for _, line := range sections["Comandos disponibles"] {
			if f := strings.Fields(line); len(f) > 1 && f[0] != "help" {
				queue = append(queue, append(append([]string{}, path...), f[0]))
			}
		}
		options := append(sections["Opciones"], sections["Opciones globales"]...)
		if len(options) == 0 {
			t.Errorf("%s --help lists no options (-h at least):\n%s", name, out)
		}
		for _, line := range options {
			m := optionRE.FindStringSubmatch(line)
			if m == nil {
				t.Errorf("%s: option line without a description: %q", name, line)
				continue
			}
			var spanish, english []string
			for _, w := range wordRE.FindAllString(m[2], -1) {
				if w == strings.ToUpper(w) {
					continue // a placeholder or a name (ARCHIVO, CFE_AGENT_CERTIFICATE_PASSWORD)
				}
				w = strings.ToLower(w)
				if spanishWords[w] {
					spanish = append(spanish, w)
				}
				if englishWords[w] {
					english = append(english, w)
				}
			}
			if len(english) > 0 || (len(spanish) == 0 && len(wordRE.FindAllString(m[2], -1)) > 2) {
				t.Errorf("%s: option %s is not described in Spanish (%q; English words %v)", name, m[1], m[2], english)
			}
		}
	}
	if seen < 20 {
		t.Errorf("walked %d commands, want every command of the tree (more than 20)", seen)
	}
}

// TestCLI_ErrorsInSpanish: cobra's and pflag's refusals reach the
// technician in Spanish.
func TestCLI_ErrorsInSpanish(t *testing.T) {
	env := agentEnv("CFE_AGENT_DATA_DIR=" + t.TempDir())
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--nope"}, 1, "opción desconocida: --nope (vea --help)"},
		{[]string{"cae", "list", "-x"}, 1, "opción desconocida en -x"},
		{[]string{"docto"}, 1, "comando desconocido «docto» para «cfe-agent»; ¿quiso decir «doctor»?"},
		{[]string{"cae", "list", "sobrante"}, 1, "«cfe-agent cae list» no acepta argumentos y recibió «sobrante» (uso: cfe-agent cae list [opciones])"},
		{[]string{"verify"}, 1, "«cfe-agent verify» espera al menos 1 argumento y recibió 0"},
		{[]string{"cae", "used-elsewhere", "101"}, 1, "«cfe-agent cae used-elsewhere» espera 3 argumentos y recibió 1"},
		{[]string{"profile", "show", "a", "b"}, 1, "«cfe-agent profile show» espera a lo sumo 1 argumento y recibió 2"},
		{[]string{"envelope", "--tipo", "x"}, 1, "valor inválido «x» para --tipo: se espera un número entero"},
		{[]string{"envelope", "--output"}, 1, "la opción --output necesita un valor"},
		{[]string{"render", "ticket.xml"}, 1, "falta --output: indique el archivo PDF a escribir"},
		{[]string{"--version"}, 0, "cfe-agent versión "}, // "dev", or the version go build stamps from a clean checkout
		{[]string{"help", "cae", "list"}, 0, "Lista los rangos CAE del perfil activo"},
		{[]string{"help", "nada"}, 1, "no hay ayuda sobre «nada»"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			out, code := runCLI(t, env, tt.args...)
			if code != tt.code || !strings.Contains(out, tt.want) {
				t.Errorf("exit %d, want %d with %q:\n%s", code, tt.code, tt.want, out)
			}
			for _, w := range []string{"unknown", "flag", "accepts", "requires", "arg(s)", "invalid argument", "Error:"} {
				if strings.Contains(out, w) {
					t.Errorf("English %q in:\n%s", w, out)
				}
			}
		})
	}
}
