package autostart

import (
	"encoding/xml"
	"strings"
	"testing"
)

var agent = Entry{Name: "cfe-agent", DisplayName: "Agente CFE", Command: []string{"/opt/cfe agent/cfe-agent", "--data-dir", "/home/caja/100% datos"}}

func TestDesktopEntry(t *testing.T) {
	t.Parallel()
	got := string(DesktopEntry(agent))
	// Worked out from the Desktop Entry Specification: the space makes both
	// paths quoted; a literal % is doubled.
	for _, line := range []string{
		"[Desktop Entry]", "Type=Application", "Name=Agente CFE",
		`Exec="/opt/cfe agent/cfe-agent" --data-dir "/home/caja/100%% datos"`,
		"Terminal=false", "X-GNOME-Autostart-enabled=true",
	} {
		if !strings.Contains(got, line+"\n") {
			t.Errorf("entry lacks line %q:\n%s", line, got)
		}
	}
	if q := desktopQuote(`a"b$c`); q != `"a\"b\$c"` {
		t.Errorf("desktopQuote = %s", q)
	}
}

func TestLaunchAgentPlist(t *testing.T) {
	t.Parallel()
	var plist struct {
		Dict struct {
			Keys    []string `xml:"key"`
			Strings []string `xml:"string"`
			Array   []string `xml:"array>string"`
		} `xml:"dict"`
	}
	e := agent
	e.Command = append(e.Command, "a<b&c")
	if err := xml.Unmarshal(LaunchAgentPlist(e), &plist); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(plist.Dict.Array, "|"); got != "/opt/cfe agent/cfe-agent|--data-dir|/home/caja/100% datos|a<b&c" {
		t.Errorf("ProgramArguments = %q", got)
	}
	if got := strings.Join(plist.Dict.Keys, ","); got != "Label,ProgramArguments,RunAtLoad,KeepAlive,ProcessType" {
		t.Errorf("keys = %s", got)
	}
	if plist.Dict.Strings[0] != "uy.cfe-agent.cfe-agent" {
		t.Errorf("label = %s", plist.Dict.Strings[0])
	}
}

func TestRunCommand(t *testing.T) {
	t.Parallel()
	// CommandLineToArgvW rules: quote arguments with blanks; backslashes
	// are literal except before a quote, where each is doubled.
	cases := []struct {
		args []string
		want string
	}{
		{[]string{`C:\Program Files\cfe-agent\cfe-agent.exe`}, `"C:\Program Files\cfe-agent\cfe-agent.exe"`},
		{[]string{`C:\cfe\cfe-agent.exe`, "--data-dir", `D:\datos caja\`}, `C:\cfe\cfe-agent.exe --data-dir "D:\datos caja\\"`},
		{[]string{`x.exe`, `a"b`, ``}, `x.exe "a\"b" ""`},
		{[]string{`x.exe`, `a\"b c`}, `x.exe "a\\\"b c"`},
	}
	for _, c := range cases {
		if got := RunCommand(Entry{Name: "x", Command: c.args}); got != c.want {
			t.Errorf("RunCommand(%q) = %s, want %s", c.args, got, c.want)
		}
	}
}

func TestEntry_check(t *testing.T) {
	t.Parallel()
	for _, e := range []Entry{{Name: "", Command: []string{"/x"}}, {Name: "a/b", Command: []string{"/x"}}, {Name: "ok"}} {
		if e.check() == nil {
			t.Errorf("%+v accepted", e)
		}
	}
}
