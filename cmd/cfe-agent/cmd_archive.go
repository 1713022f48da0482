package main

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cfe-agent/cfe-agent/app"
	"github.com/cfe-agent/cfe-agent/cfe"
)

// newArchiveCommand is "archive": move the delivered CFEs of previous years
// from the store to its yearly archive files (store.DB.Archive).
func newArchiveCommand(opts *app.Options) *cobra.Command {
	var before string
	cmd := &cobra.Command{
		Use:   "archive [--antes AAAA-MM-DD]",
		Short: "Mueve los CFE de años anteriores ya entregados a archivos históricos anuales",
		Long: "Mueve los CFE firmados antes de --antes (por defecto, el 1 de enero del año en curso: los años " +
			"anteriores; con archive.keep_years en el perfil, los años que este no conserva) del archivo de datos del agente a un archivo histórico por año de firma, junto a él " +
			"(<perfil>-archive-<año>.db). Solo se mueven CFE que el servicio ya aceptó: uno pendiente de envío o " +
			"rechazado se queda, y con él los números siguientes de su serie. Los CFE movidos se siguen " +
			"encontrando para reimprimir, sobres y verificaciones. Se puede interrumpir y volver a ejecutar. " +
			"El agente no debe estar en ejecución (usa su base de datos); en ejecución, lo hace una vez al día " +
			"(salvo archive.disabled en el perfil).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var day cfe.Date
			if before != "" {
				var err error
				if day, err = cfe.ParseDate(before); err != nil {
					return cfe.Errorf(cfe.EINVALID, "--antes: %q no es una fecha AAAA-MM-DD", before)
				}
			}
			a, err := app.Open(cmd.Context(), *opts, cliLogger())
			if err != nil {
				return err
			}
			defer a.Close()
			if day.IsZero() {
				day = a.Profile.Archive.Before(time.Now())
			}
			res, err := a.DB.Archive(cmd.Context(), day)
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "%d CFE firmados antes del %s movidos a archivos históricos\n", res.Moved, day)
			for _, y := range slices.Sorted(maps.Keys(res.Years)) {
				fmt.Fprintf(w, "  %d: %d CFE en %s\n", y, res.Years[y], filepath.Base(a.DB.ArchivePath(y)))
			}
			var kept []string
			for _, s := range slices.Sorted(maps.Keys(res.Kept)) {
				kept = append(kept, fmt.Sprintf("%s: %d", s, res.Kept[s]))
			}
			if len(kept) > 0 {
				fmt.Fprintf(w, "quedan en el archivo de datos (sin entregar al servicio, o después de uno sin entregar): %s\n",
					strings.Join(kept, ", "))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&before, "antes", "", "mover los CFE firmados antes de esta fecha (AAAA-MM-DD, hora de Montevideo; si no se indica: el 1 de enero del año más antiguo que el perfil conserva, archive.keep_years, 1 si no se indica)")
	return cmd
}
