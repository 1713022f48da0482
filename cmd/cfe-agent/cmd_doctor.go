package main

import (
	"context"
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/cfe-agent/cfe-agent/app"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
)

func newDoctorCommand(opts *app.Options) *cobra.Command {
	return &cobra.Command{
		Use:   "doctor",
		Short: "Diagnostica el equipo y el perfil activo: una línea OK/WARN/FAIL por comprobación",
		Long: "Comprueba la zona horaria, el certificado, los rangos CAE, la dirección de escucha, la cola de envíos " +
			"(y los comprobantes dañados en cuarentena), " +
			"el servicio en la nube y las impresoras. Funciona con el agente en ejecución o detenido. " +
			"Termina con estado 1 si alguna comprobación falla.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if failed := app.WriteDoctor(cmd.Context(), doctorConfig(*opts), cmd.OutOrStdout()); failed > 0 {
				return errChecksFailed{failed}
			}
			return nil
		},
	}
}

// doctorConfig is the doctor of opts. With the agent stopped, the doctor
// reads the state of the profile it opens from a private local module on a
// free loopback port.
func doctorConfig(opts app.Options) app.DoctorConfig {
	return app.DoctorConfig{Options: opts, LocalState: func(ctx context.Context, a *app.Agent) (*apitype.StateReport, error) {
		srv := newServer(a, "127.0.0.1:0", slog.New(slog.DiscardHandler))
		if err := srv.Open(); err != nil {
			return nil, err
		}
		defer func() { _ = srv.Close() }()
		return app.StateAt(ctx, srv.BaseURL())
	}}
}
