package app

import (
	"context"
	"io"

	"github.com/cfe-agent/cfe-agent/localapi/localclient"
)

// CommandDiagnostics is the source of "cfe-agent diagnostics"' archive: the
// configuration of opts, the running agent's state read from its local
// module (at its run file's address, else at the profile's; none when it
// does not answer) and the doctor's checks (doctor).
func CommandDiagnostics(opts Options, version string, doctor DoctorConfig) (DiagnosticsSource, error) {
	dataDir, cfg, _, err := LoadConfig(opts)
	if err != nil {
		return DiagnosticsSource{}, err
	}
	src := DiagnosticsSource{Version: version, DataDir: dataDir, Config: cfg,
		Doctor: func(ctx context.Context, w io.Writer) { WriteDoctor(ctx, doctor, w) }}
	if p, ok := cfg.ActiveProfile(); ok {
		base := "http://" + p.Listen
		if info, ok := ReadRunFile(dataDir, cfg.Active); ok {
			base = info.BaseURL
		}
		if c, err := localclient.New(base, localclient.Options{}); err == nil {
			src.State = c.State
		}
	}
	return src, nil
}
