package autostart

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"strings"
)

// Entry is a program started with the user's session.
type Entry struct {
	// Name identifies the entry: the .desktop file's name, the Run value's
	// name, and the LaunchAgent's label suffix. Letters, digits, '-', '_' and
	// '.' only.
	Name string
	// DisplayName is shown by the desktop's startup settings.
	DisplayName string
	// Command is the program (an absolute path) and its arguments.
	Command []string
	// Custom says Command starts the program differently from the
	// installer's machine-wide entry (with another data directory): Enable
	// then keeps the user's own entry instead of relying on the installer's.
	Custom bool
}

func (e Entry) check() error {
	if e.Name == "" || strings.IndexFunc(e.Name, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.')
	}) >= 0 {
		return fmt.Errorf("autostart: invalid entry name %q", e.Name)
	}
	if len(e.Command) == 0 || e.Command[0] == "" {
		return fmt.Errorf("autostart: entry %q has no command", e.Name)
	}
	return nil
}

// DesktopEntry returns the XDG autostart file of e (Desktop Entry
// Specification 1.5): the Exec key quotes every argument that needs it.
func DesktopEntry(e Entry) []byte {
	args := make([]string, len(e.Command))
	for i, a := range e.Command {
		args[i] = desktopQuote(a)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "[Desktop Entry]\nType=Application\nVersion=1.5\nName=%s\n", desktopValue(e.DisplayName))
	fmt.Fprintf(&b, "Exec=%s\nTerminal=false\nNoDisplay=true\nX-GNOME-Autostart-enabled=true\n", desktopValue(strings.Join(args, " ")))
	return b.Bytes()
}

// HiddenDesktopEntry returns the user's XDG autostart file that turns off,
// for that user, the machine-wide entry of the same name (Desktop Entry
// Specification: Hidden=true means the entry is treated as deleted).
func HiddenDesktopEntry(e Entry) []byte {
	return []byte("[Desktop Entry]\nType=Application\nName=" + desktopValue(e.DisplayName) + "\nHidden=true\n")
}

// desktopQuote quotes one Exec argument: arguments holding a reserved
// character are double-quoted with ", `, $ and \ backslash-escaped, and a
// literal % is written %%.
func desktopQuote(arg string) string {
	arg = strings.ReplaceAll(arg, "%", "%%")
	if arg != "" && !strings.ContainsAny(arg, " \t\n\"'\\><~|&;$*?#()`") {
		return arg
	}
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range arg {
		if strings.ContainsRune("\"`$\\", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	b.WriteByte('"')
	return b.String()
}

// desktopValue escapes a value of a desktop file's string key: backslashes
// are doubled and line breaks written as \n.
func desktopValue(s string) string {
	return strings.NewReplacer(`\`, `\\`, "\n", `\n`, "\r", `\r`, "\t", `\t`).Replace(s)
}

// LaunchAgentLabel is the launchd label of e.
func LaunchAgentLabel(e Entry) string { return "uy.cfe-agent." + e.Name }

// LaunchAgentPlist returns the LaunchAgent property list of e: run at load
// (login), not kept alive (quitting from the tray stays quit).
func LaunchAgentPlist(e Entry) []byte {
	var b bytes.Buffer
	b.WriteString(xml.Header)
	b.WriteString(`<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">` + "\n")
	b.WriteString("<plist version=\"1.0\">\n<dict>\n")
	fmt.Fprintf(&b, "\t<key>Label</key>\n\t<string>%s</string>\n", xmlText(LaunchAgentLabel(e)))
	b.WriteString("\t<key>ProgramArguments</key>\n\t<array>\n")
	for _, a := range e.Command {
		fmt.Fprintf(&b, "\t\t<string>%s</string>\n", xmlText(a))
	}
	b.WriteString("\t</array>\n\t<key>RunAtLoad</key>\n\t<true/>\n\t<key>KeepAlive</key>\n\t<false/>\n")
	b.WriteString("\t<key>ProcessType</key>\n\t<string>Interactive</string>\n</dict>\n</plist>\n")
	return b.Bytes()
}

func xmlText(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s)) // writing to a strings.Builder cannot fail
	return b.String()
}

// RunCommand returns the command line stored in the Windows Run key for e,
// quoted as CommandLineToArgvW parses it.
func RunCommand(e Entry) string {
	args := make([]string, len(e.Command))
	for i, a := range e.Command {
		args[i] = windowsQuote(a)
	}
	return strings.Join(args, " ")
}

// windowsQuote quotes one argument for CommandLineToArgvW: backslashes are
// literal unless they precede a quote, so those (and the closing quote's) are
// doubled.
func windowsQuote(arg string) string {
	if arg != "" && !strings.ContainsAny(arg, " \t\n\v\"") {
		return arg
	}
	var b strings.Builder
	b.WriteByte('"')
	slashes := 0
	for _, r := range arg {
		switch r {
		case '\\':
			slashes++
		case '"':
			b.WriteString(strings.Repeat(`\`, slashes+1))
			slashes = 0
		default:
			slashes = 0
		}
		b.WriteRune(r)
	}
	b.WriteString(strings.Repeat(`\`, slashes))
	b.WriteByte('"')
	return b.String()
}
