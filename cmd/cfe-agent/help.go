package main

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// The command line speaks Spanish to the technician: cobra's usage, help and
// version texts, its help command and flag, and its errors (unknown
// commands and flags, arguments) are replaced or translated here. Logs stay
// English.

// usageTemplate is cobra's usage template in Spanish; flag lines come from
// flagUsages, which translates pflag's own words.
const usageTemplate = `Uso:{{if .Runnable}}
  {{useLine .}}{{end}}{{if .HasAvailableSubCommands}}
  {{.CommandPath}} [comando]{{end}}{{if gt (len .Aliases) 0}}

Alias:
  {{.NameAndAliases}}{{end}}{{if .HasExample}}

Ejemplos:
{{.Example}}{{end}}{{if .HasAvailableSubCommands}}

Comandos disponibles:{{range .Commands}}{{if (or .IsAvailableCommand (eq .Name "help"))}}
  {{rpad .Name .NamePadding }} {{.Short}}{{end}}{{end}}{{end}}{{if .HasAvailableLocalFlags}}

Opciones:
{{flagUsages .LocalFlags}}{{end}}{{if .HasAvailableInheritedFlags}}

Opciones globales:
{{flagUsages .InheritedFlags}}{{end}}{{if .HasHelpSubCommands}}

Otros temas de ayuda:{{range .Commands}}{{if .IsAdditionalHelpTopicCommand}}
  {{rpad .CommandPath .CommandPathPadding}} {{.Short}}{{end}}{{end}}{{end}}{{if .HasAvailableSubCommands}}

Use "{{.CommandPath}} [comando] --help" para ver la ayuda de un comando.{{end}}
`

// versionTemplate is what --version prints.
const versionTemplate = "{{.DisplayName}} versión {{.Version}}\n"

// typeNames are the placeholders of flag values, by pflag type.
var typeNames = map[string]string{
	"string": "TEXTO", "stringArray": "TEXTO", "stringSlice": "TEXTO", "int": "N", "int64": "N", "uint": "N",
	"duration": "DURACIÓN", "float64": "NÚMERO",
}

// flagUsages lists flags as pflag does, in Spanish: "-o, --output ARCHIVO"
// (the placeholder is the description's `word`, else the value's type) and
// the default value, when there is one.
func flagUsages(fs *pflag.FlagSet) string {
	type line struct{ left, usage string }
	var lines []line
	width := 0
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		left := "      --" + f.Name
		if f.Shorthand != "" {
			left = "  -" + f.Shorthand + ", --" + f.Name
		}
		name, usage := pflag.UnquoteUsage(f)
		if strings.Contains(f.Usage, "`") {
			left += " " + name
		} else if t, ok := typeNames[f.Value.Type()]; ok {
			left += " " + t
		}
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" && f.DefValue != "[]" {
			usage += fmt.Sprintf(" (predeterminado: %s)", f.DefValue)
		}
		lines = append(lines, line{left, usage})
		width = max(width, len([]rune(left)))
	})
	var b strings.Builder
	for i, l := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%-*s   %s", width, l.left, l.usage)
	}
	return b.String()
}

// findSub is c's subcommand called name (or one of its aliases), or nil.
func findSub(c *cobra.Command, name string) *cobra.Command {
	for _, sub := range c.Commands() {
		if sub.Name() == name || sub.HasAlias(name) {
			return sub
		}
	}
	return nil
}

// useLine is the command's usage line, with "[opciones]" when its Use does
// not show its options already.
func useLine(c *cobra.Command) string {
	if strings.Contains(c.Use, " -") || strings.Contains(c.Use, "[-") {
		return c.UseLine()
	}
	return c.UseLine() + " [opciones]"
}

// spanishCommandLine makes root's tree speak Spanish. It runs once the tree
// is complete.
func spanishCommandLine(root *cobra.Command) {
	cobra.AddTemplateFunc("flagUsages", flagUsages)
	cobra.AddTemplateFunc("useLine", useLine)
	root.CompletionOptions.DisableDefaultCmd = true // its texts are English, and a shop's technician does not need it
	root.SetUsageTemplate(usageTemplate)
	root.SetVersionTemplate(versionTemplate)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return flagError(err) })
	root.SetHelpCommand(&cobra.Command{
		Use:   "help [comando]",
		Short: "Muestra la ayuda de un comando",
		Long:  "Muestra la ayuda de cualquier comando: cfe-agent help [ruta del comando].",
		RunE: func(c *cobra.Command, args []string) error {
			cmd := c.Root()
			for _, name := range args {
				sub := findSub(cmd, name)
				if sub == nil {
					return fmt.Errorf("no hay ayuda sobre «%s»: vea «cfe-agent --help»", strings.Join(args, " "))
				}
				cmd = sub
			}
			cmd.InitDefaultHelpFlag()
			cmd.InitDefaultVersionFlag()
			return cmd.Help()
		},
	})
	root.Flags().BoolP("version", "v", false, "muestra la versión de cfe-agent")
	// The root runs the agent and takes no arguments: another word is a
	// command that does not exist.
	root.Args = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return nil
		}
		msg := fmt.Sprintf("comando desconocido «%s» para «%s»", args[0], cmd.CommandPath())
		if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
			msg += "; ¿quiso decir «" + strings.Join(s, "», «") + "»?"
		}
		return errors.New(msg + " (vea «cfe-agent --help»)")
	}
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		c.DisableFlagsInUseLine = true // cobra would append "[flags]"; useLine says "[opciones]"
		c.Flags().BoolP("help", "h", false, "muestra esta ayuda")
		if c.Args != nil && c != root {
			orig := c.Args
			c.Args = func(cmd *cobra.Command, args []string) error {
				if err := orig(cmd, args); err != nil {
					return argsError(cmd, err)
				}
				return nil
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// argsErrors translate cobra's argument errors, known by their (stable)
// English wording; m holds the submatches, path the command's.
var argsErrors = []struct {
	re  *regexp.Regexp
	say func(m []string, cmd *cobra.Command) string
}{
	{regexp.MustCompile(`^accepts (\d+) arg\(s\), received (\d+)$`), func(m []string, cmd *cobra.Command) string {
		return fmt.Sprintf("«%s» espera %s %s y recibió %s", cmd.CommandPath(), m[1], plural(m[1], "argumento"), m[2])
	}},
	{regexp.MustCompile(`^requires at least (\d+) arg\(s\), only received (\d+)$`), func(m []string, cmd *cobra.Command) string {
		return fmt.Sprintf("«%s» espera al menos %s %s y recibió %s", cmd.CommandPath(), m[1], plural(m[1], "argumento"), m[2])
	}},
	{regexp.MustCompile(`^accepts at most (\d+) arg\(s\), received (\d+)$`), func(m []string, cmd *cobra.Command) string {
		return fmt.Sprintf("«%s» espera a lo sumo %s %s y recibió %s", cmd.CommandPath(), m[1], plural(m[1], "argumento"), m[2])
	}},
	{regexp.MustCompile(`^accepts between (\d+) and (\d+) arg\(s\), received (\d+)$`), func(m []string, cmd *cobra.Command) string {
		return fmt.Sprintf("«%s» espera entre %s y %s argumentos y recibió %s", cmd.CommandPath(), m[1], m[2], m[3])
	}},
	{regexp.MustCompile(`^unknown command "(.*)" for "`), func(m []string, cmd *cobra.Command) string {
		return fmt.Sprintf("«%s» no acepta argumentos y recibió «%s»", cmd.CommandPath(), m[1])
	}},
	{regexp.MustCompile(`^invalid argument "(.*)" for "`), func(m []string, cmd *cobra.Command) string {
		return fmt.Sprintf("«%s» no es un argumento válido de «%s»; se espera: %s", m[1], cmd.CommandPath(),
			strings.Join(cmd.ValidArgs, ", "))
	}},
}

// argsError says in Spanish what cobra's argument validators refused; an
// error of the agent's own validators is already Spanish.
func argsError(cmd *cobra.Command, err error) error {
	for _, e := range argsErrors {
		if m := e.re.FindStringSubmatch(err.Error()); m != nil {
			return fmt.Errorf("%s (uso: %s)", e.say(m, cmd), useLine(cmd))
		}
	}
	return err
}

func plural(n, word string) string {
	if n == "1" {
		return word
	}
	return word + "s"
}

// flagError says in Spanish what pflag refused.
func flagError(err error) error {
	var (
		notExist *pflag.NotExistError
		required *pflag.ValueRequiredError
		invalid  *pflag.InvalidValueError
		syntax   *pflag.InvalidSyntaxError
	)
	switch {
	case errors.As(err, &notExist):
		if short := notExist.GetSpecifiedShortnames(); short != "" {
			return fmt.Errorf("opción desconocida en -%s (vea --help)", short)
		}
		return fmt.Errorf("opción desconocida: --%s (vea --help)", notExist.GetSpecifiedName())
	case errors.As(err, &required):
		return fmt.Errorf("la opción --%s necesita un valor", required.GetFlag().Name)
	case errors.As(err, &invalid):
		f := invalid.GetFlag()
		want := map[string]string{"int": "un número entero", "int64": "un número entero", "bool": "true o false",
			"duration": "una duración como 30s o 5m"}[f.Value.Type()]
		if want == "" {
			want = "otro valor"
		}
		return fmt.Errorf("valor inválido «%s» para --%s: se espera %s", invalid.GetValue(), f.Name, want)
	case errors.As(err, &syntax):
		return fmt.Errorf("opción mal escrita: %s", syntax.GetSpecifiedFlag())
	}
	return fmt.Errorf("opciones inválidas: %w", err)
}

// requiredFlag refuses a run without a flag the command needs (cobra's own
// check answers in English).
func requiredFlag(value, name, what string) error {
	if value != "" {
		return nil
	}
	return fmt.Errorf("falta --%s: %s", name, what)
}
