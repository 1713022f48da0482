package app

import (
	"archive/zip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/cfe-agent/cfe-agent/localapi/apitype"
	"github.com/cfe-agent/cfe-agent/logs"
	"github.com/cfe-agent/cfe-agent/profiles"
)

// DiagnosticsSource is what a diagnostic archive is made of.
type DiagnosticsSource struct {
	Version string // the agent's version, for versions.txt
	DataDir string
	Config  *profiles.Config
	// State reads the running agent's state report, which goes in: over
	// its local module for the command, in-process for the tray; nil when
	// no agent runs.
	State func(ctx context.Context) (*apitype.StateReport, error)
	// Doctor writes the doctor's checks (cfe-agent doctor) to w.
	Doctor func(ctx context.Context, w io.Writer)
}

// ExportDiagnostics writes the diagnostic archive to path (a new file in the
// data directory's diagnostics folder when path is empty) and returns its
// path. The archive holds the log files, the configuration with its secrets
// masked (profiles.Redacted), the running agent's /state (or why it could not
// be read), the versions, and the doctor's checks (cfe-agent doctor).
func ExportDiagnostics(ctx context.Context, src DiagnosticsSource, path string) (string, error) {
	if path == "" {
		dir := filepath.Join(src.DataDir, "diagnostics")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return "", err
		}
		path = filepath.Join(dir, "cfe-agent-diagnostico-"+time.Now().Format("20060102-150405")+".zip")
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", err
	}
	zw := zip.NewWriter(f)
	err = writeDiagnostics(ctx, zw, src)
	if cerr := zw.Close(); err == nil {
		err = cerr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return "", fmt.Errorf("writing the diagnostic archive: %w", err)
	}
	return path, nil
}

func writeDiagnostics(ctx context.Context, zw *zip.Writer, src DiagnosticsSource) error {
	add := func(name string, write func(w io.Writer) error) error {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate, Modified: time.Now()})
		if err != nil {
			return err
		}
		return write(w)
	}
	if err := add("versions.txt", func(w io.Writer) error { return writeVersions(w, src.Version) }); err != nil {
		return err
	}
	if err := add("config.yaml", func(w io.Writer) error {
		enc := yaml.NewEncoder(w)
		enc.SetIndent(2)
		return enc.Encode(profiles.Redacted(src.Config))
	}); err != nil {
		return err
	}
	if err := add("state.json", func(w io.Writer) error { return writeState(ctx, w, src.State) }); err != nil {
		return err
	}
	if err := add("doctor.txt", func(w io.Writer) error {
		if src.Doctor != nil {
			src.Doctor(ctx, w)
		}
		return nil
	}); err != nil {
		return err
	}
	logDir := logs.Dir(src.DataDir)
	entries, err := os.ReadDir(logDir)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		if err := add("logs/"+e.Name(), func(w io.Writer) error { return copyFile(w, filepath.Join(logDir, e.Name())) }); err != nil {
			return err
		}
	}
	return nil
}

// writeState writes the running agent's /state, or why it could not be read.
func writeState(ctx context.Context, w io.Writer, state func(context.Context) (*apitype.StateReport, error)) error {
	var v any = map[string]string{"error": "no running agent was asked"}
	if state != nil {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if st, err := state(ctx); err != nil {
			v = map[string]string{"error": err.Error()}
		} else {
			v = st
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func writeVersions(w io.Writer, version string) error {
	fmt.Fprintf(w, "cfe-agent %s\n%s %s/%s\n", version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	fmt.Fprintf(w, "written %s\n", time.Now().Format(time.RFC3339))
	if bi, ok := debug.ReadBuildInfo(); ok {
		fmt.Fprintln(w, "\nmodules:")
		for _, d := range bi.Deps {
			fmt.Fprintf(w, "  %s %s\n", d.Path, d.Version)
		}
	}
	return nil
}

func copyFile(w io.Writer, path string) error {
	f, err := os.Open(path)
	if err != nil {
		if os.IsNotExist(err) { // rotated away meanwhile
			return nil
		}
		return err
	}
	defer f.Close()
	_, err = io.Copy(w, f)
	return err
}
