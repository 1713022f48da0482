package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/cfe-agent/cfe-agent/dgi"
	"github.com/cfe-agent/cfe-agent/sandbox/dgi/emulator"
)

// dgiCommand is `cfe-sandbox dgi`: the emulator of DGI's web services
// (docs/dgi-emulator.md). Its help is Spanish: technicians and integrators
// run it.
func dgiCommand(ctx context.Context) *cobra.Command {
	var cfg emulator.Config
	cmd := &cobra.Command{
		Use:   "dgi",
		Short: "Emulador de los servicios web de DGI (recepción y consultas de CFE)",
		Long: "Emula los servicios web de DGI para comprobantes fiscales electrónicos: recepción de sobres y reportes\n" +
			"(" + dgi.PathReception + ") y consultas (" + dgi.PathQueries + "), con WS-Security como DGI.\n" +
			"Escribe en DIR/" + emulator.CertFile + " el certificado con el que firma sus respuestas (de prueba, sin valor fiscal):\n" +
			"configúrelo como certificado de DGI del cliente. Las perillas (demora, corte tras recibir, inalcanzable,\n" +
			"rechazos elegidos, reloj) y los conteos de sobres por CFE están en la dirección de administración.\n" +
			"Detalle: docs/dgi-emulator.md.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
			return serveDGI(ctx, cmd, cfg)
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.Listen, "listen", emulator.DefaultListen, "dirección de los servicios de DGI")
	f.StringVar(&cfg.AdminListen, "admin-listen", emulator.DefaultAdminListen, "dirección de administración (perillas y conteos)")
	f.StringVar(&cfg.DataDir, "data-dir", "cfe-sandbox-dgi-data", "directorio de datos del emulador (registros, clave y certificado)")
	f.DurationVar(&cfg.Processing, "procesamiento", emulator.DefaultProcessing, "tiempo desde la recepción de un sobre hasta que se puede consultar su resultado (Fechahora); negativo: inmediato")
	f.DurationVar(&cfg.Delay, "demora", 0, "demora de cada respuesta de los servicios")
	return cmd
}

func serveDGI(ctx context.Context, cmd *cobra.Command, cfg emulator.Config) error {
	e, err := emulator.New(cfg)
	if err != nil {
		return err
	}
	if err := e.Open(); err != nil {
		return errors.Join(err, e.Close())
	}
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "cfe-sandbox dgi escuchando en %s (recepción %s, consultas %s)\n", e.URL(), dgi.PathReception, dgi.PathQueries)
	fmt.Fprintf(out, "administración en %s/admin/estado\n", e.AdminURL())
	fmt.Fprintf(out, "certificado de las respuestas: %s\n", filepath.Join(cfg.DataDir, emulator.CertFile))
	<-ctx.Done()
	return e.Close()
}
