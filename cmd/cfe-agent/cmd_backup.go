package main

import (
	"github.com/spf13/cobra"

	"github.com/cfe-agent/cfe-agent/app"
)

func newBackupCommand(opts *app.Options) *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "backup [-o ARCHIVO]",
		Short: "Hace una copia de seguridad verificada del archivo de datos, también con el agente en ejecución",
		Long: "Copia el archivo de datos del perfil tal como estaba en un instante (los comprobantes, la cola de envíos,\n" +
			"los rangos CAE y el diario de numeración de ese momento), la verifica y la guarda sin dejar nunca un archivo\n" +
			"a medio escribir. Con el agente en ejecución la hace el agente (que tiene el archivo abierto); si no, este\n" +
			"comando. Sin -o queda en la carpeta backups de la carpeta de datos.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			info, err := app.TakeBackup(cmd.Context(), *opts, out, cliLogger())
			if err != nil {
				return err
			}
			app.WriteBackupInfo(cmd.OutOrStdout(), info)
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "ARCHIVO de la copia (si no se indica: <carpeta de datos>/backups/<ambiente>/<perfil>/…)")
	return cmd
}

func newRestoreCommand(opts *app.Options) *cobra.Command {
	var confirmed []string
	var r app.RestoreRequest
	cmd := &cobra.Command{
		Use:   "restore ARCHIVO",
		Short: "Restaura una copia de seguridad (con el agente detenido), sin volver a usar ningún número",
		Long: "Verifica la copia (que sea una copia íntegra de este perfil, ambiente y RUC, y que cada comprobante esté\n" +
			"entero y con su firma válida) y la pone en lugar del archivo de datos, que se conserva con la fecha en el\n" +
			"nombre. Una copia de otra instalación (otro archivo de datos que no es el de esta carpeta ni uno anterior\n" +
			"a él) se rechaza, salvo que un técnico la nombre con --aceptar-copia-ajena IDENTIDAD. Si el servicio en\n" +
			"línea responde y guarda otros comprobantes con los mismos números que la copia, se rechaza. Si la copia\n" +
			"está atrás de la numeración ya usada (el archivo que reemplaza, el diario de numeración o el servicio en\n" +
			"línea saben de números posteriores), se rechaza, salvo que un técnico confirme el último número usado de\n" +
			"cada serie con --confirmar-numeros-usados TIPO:SERIE:NUMERO; la numeración sigue después de ese número.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			if r.Confirmed, err = app.ParseConfirmed(confirmed); err != nil {
				return err
			}
			r.File, r.Notices = args[0], cmd.OutOrStdout()
			res, err := app.Restore(cmd.Context(), *opts, r, cliLogger())
			if err != nil {
				return err
			}
			res.Write(cmd.OutOrStdout())
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&confirmed, "confirmar-numeros-usados", nil,
		"TIPO:SERIE:NUMERO, el último número de la serie usado desde la copia (una vez por serie)")
	cmd.Flags().StringVar(&r.Foreign, "aceptar-copia-ajena", "",
		"IDENTIDAD de una copia de otra instalación que se quiere restaurar igual (la que nombra el rechazo)")
	cmd.Flags().BoolVar(&r.Offline, "sin-servicio", false,
		"no consultar al servicio en la nube (ni sus últimos números ni sus comprobantes)")
	return cmd
}
