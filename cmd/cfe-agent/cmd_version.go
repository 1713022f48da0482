package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// commit and buildDate are set at build time with -ldflags "-X main.commit=...
// -X main.buildDate=..." (the Makefile does); when empty they come from the
// build information the Go toolchain embeds (vcs.revision, vcs.time).
var (
	commit    = ""
	buildDate = ""
)

// buildInfo describes this executable.
type buildInfo struct {
	Version   string // the git tag description the Makefile passes, else the module version, else "dev"
	Commit    string // "" when unknown
	Date      string // RFC 3339, "" when unknown
	GoVersion string
	Platform  string // GOOS/GOARCH
}

// currentBuild returns this executable's build information: the values the
// linker set, completed from runtime/debug.ReadBuildInfo.
func currentBuild() buildInfo {
	b := buildInfo{Version: version, Commit: commit, Date: buildDate, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		b = b.completedFrom(bi)
	}
	return b
}

// completedFrom fills what the linker did not set from bi: the main module's
// version when it was built from a tag ("go install ...@v1.2.0"), and the VCS
// revision and time when the toolchain stamped them.
func (b buildInfo) completedFrom(bi *debug.BuildInfo) buildInfo {
	if (b.Version == "" || b.Version == "dev") && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		b.Version = bi.Main.Version
	}
	if b.Version == "" {
		b.Version = "dev"
	}
	modified, fromVCS := false, false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			if b.Commit == "" {
				b.Commit, fromVCS = s.Value, true
			}
		case "vcs.time":
			if b.Date == "" {
				b.Date = s.Value
			}
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if modified && fromVCS {
		b.Commit += "-dirty"
	}
	if bi.GoVersion != "" {
		b.GoVersion = bi.GoVersion
	}
	return b
}

// String is the text of "cfe-agent version": the version on the first line,
// then one line per detail.
func (b buildInfo) String() string {
	unknown := func(s string) string {
		if s == "" {
			return "desconocido"
		}
		return s
	}
	return fmt.Sprintf("%s\ncommit: %s\ncompilado: %s\ngo: %s\nsistema: %s",
		b.Version, unknown(b.Commit), unknown(b.Date), b.GoVersion, b.Platform)
}

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Muestra la versión, el commit, la fecha de compilación, la versión de Go y el sistema",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintln(cmd.OutOrStdout(), "cfe-agent versión "+currentBuild().String())
			return err
		},
	}
}
