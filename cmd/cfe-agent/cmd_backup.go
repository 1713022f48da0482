package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/cfe-agent/cfe-agent/app"
	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/hosted"
	"github.com/cfe-agent/cfe-agent/localapi/localclient"
	"github.com/cfe-agent/cfe-agent/store"
)

// backupRequestTimeout bounds "cfe-agent backup" through the running agent.
const backupRequestTimeout = time.Hour

// restoreHostedTimeout bounds the question to the hosted service of
// "cfe-agent restore" for its last numbers.
const restoreHostedTimeout = 20 * time.Second

// restoreCompareTimeout bounds the search of the CFEs the hosted service
// holds in the backup's ranges (a search per type and two weeks since the
// ranges' authorization).
const restoreCompareTimeout = 2 * time.Minute

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
			info, err := runBackup(cmd.Context(), *opts, out)
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "copia de seguridad verificada: %s (%d bytes)\n", info.Path, info.Size)
			fmt.Fprintf(w, "  %d comprobantes, %d pendientes de envío, %d rechazados, %d rangos CAE; transacción %d del %s\n",
				info.Counts.CFEs, info.Counts.Outbox, info.Counts.Rejected, info.Counts.Ranges, info.TxID,
				info.TakenAt.In(cfe.Montevideo).Format("02/01/2006 15:04:05"))
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "ARCHIVO de la copia (si no se indica: <carpeta de datos>/backups/<ambiente>/<perfil>/…)")
	return cmd
}

// runBackup takes a backup through the running agent when there is one,
// else directly.
func runBackup(ctx context.Context, opts app.Options, out string) (*store.BackupInfo, error) {
	dataDir, cfg, _, err := app.LoadConfig(opts)
	if err != nil {
		return nil, err
	}
	if out != "" {
		if out, err = filepath.Abs(out); err != nil {
			return nil, err
		}
	}
	if info, ok := app.ReadRunFile(dataDir, cfg.Active); ok && info.AdminToken != "" {
		co := localclient.Options{AdminToken: info.AdminToken, HTTPClient: &http.Client{Timeout: backupRequestTimeout}}
		if p, ok := cfg.ActiveProfile(); ok && p.LAN.Enabled && len(p.LAN.Tokens) > 0 {
			// An agent on a LAN address sees this machine's own address,
			// not loopback: it wants a terminal token before the admin one.
			co.Token = p.LAN.Tokens[0].Value()
		}
		c, err := localclient.New(localBaseURL(info.BaseURL), co)
		if err != nil {
			return nil, err
		}
		res, err := c.Backup(ctx)
		switch {
		case err == nil:
			if out == "" {
				return store.VerifyBackup(res.Archivo, app.CopyChecks)
			}
			bi, err := app.CopyBackup(res.Archivo, out, res)
			if err != nil {
				return nil, err
			}
			_ = os.Remove(res.Archivo) // the copy asked for is out; the data directory keeps no second one
			return bi, nil
		case !errors.Is(err, syscall.ECONNREFUSED):
			return nil, &cfe.Error{Code: cfe.ErrorCode(err), Err: err,
				Message: fmt.Sprintf("el agente en ejecución (%s) no hizo la copia: %s", info.BaseURL, cfe.ErrorMessage(err))}
		}
		// A run file left by an agent that is gone: the store is free.
	}
	a, err := app.Open(ctx, opts, cliLogger())
	if err != nil {
		return nil, err
	}
	defer a.Close()
	if out == "" {
		out = filepath.Join(app.ManualBackupDir(a.DataDir, a.Profile.Environment, a.Name), app.BackupName(a.Name, time.Now(), false))
	}
	return a.DB.Backup(ctx, out, a.BackupMeta(), app.RecordChecks(0))
}

// localBaseURL turns the base URL of an agent listening on every interface
// (0.0.0.0, [::]) into its loopback address, which every system can dial.
func localBaseURL(base string) string {
	u, err := url.Parse(base)
	if err != nil {
		return base
	}
	if ip, err := netip.ParseAddr(u.Hostname()); err == nil && ip.IsUnspecified() {
		host := "127.0.0.1"
		if ip.Is6() {
			host = "::1"
		}
		u.Host = net.JoinHostPort(host, u.Port())
	}
	return u.String()
}

func newRestoreCommand(opts *app.Options) *cobra.Command {
	var confirmed []string
	var r restoreFlags
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
		RunE: func(cmd *cobra.Command, args []string) error {
			conf, err := parseConfirmed(confirmed)
			if err != nil {
				return err
			}
			r.confirmed = conf
			return runRestore(cmd.Context(), cmd.OutOrStdout(), *opts, args[0], r)
		},
	}
	cmd.Flags().StringArrayVar(&confirmed, "confirmar-numeros-usados", nil,
		"TIPO:SERIE:NUMERO, el último número de la serie usado desde la copia (una vez por serie)")
	cmd.Flags().StringVar(&r.foreign, "aceptar-copia-ajena", "",
		"IDENTIDAD de una copia de otra instalación que se quiere restaurar igual (la que nombra el rechazo)")
	cmd.Flags().BoolVar(&r.offline, "sin-servicio", false,
		"no consultar al servicio en la nube (ni sus últimos números ni sus comprobantes)")
	return cmd
}

// restoreFlags are the technician's choices of "cfe-agent restore".
type restoreFlags struct {
	confirmed []cfe.LastNumber
	foreign   string // --aceptar-copia-ajena
	offline   bool   // --sin-servicio
}

// parseConfirmed reads the --confirmar-numeros-usados values.
func parseConfirmed(values []string) ([]cfe.LastNumber, error) {
	var out []cfe.LastNumber
	for _, v := range values {
		parts := strings.Split(v, ":")
		var t, n int64
		var err1, err2 error
		if len(parts) == 3 {
			t, err1 = strconv.ParseInt(parts[0], 10, 32)
			n, err2 = strconv.ParseInt(parts[2], 10, 64)
		}
		if len(parts) != 3 || err1 != nil || err2 != nil || !cfe.Type(t).Valid() || parts[1] == "" || n < 0 {
			return nil, cfe.Errorf(cfe.EINVALID, "--confirmar-numeros-usados %q: se espera TIPO:SERIE:NUMERO, por ejemplo 101:A:1234", v)
		}
		out = append(out, cfe.LastNumber{Type: cfe.Type(t), Serie: strings.ToUpper(parts[1]), Last: n})
	}
	return out, nil
}

// runRestore puts a backup back in place of the profile's store.
func runRestore(ctx context.Context, w io.Writer, opts app.Options, file string, r restoreFlags) error {
	dataDir, cfg, _, err := app.LoadConfig(opts)
	if err != nil {
		return err
	}
	p, ok := cfg.ActiveProfile()
	if !ok {
		return cfe.Errorf(cfe.ENOTFOUND, "el perfil %q no existe", cfg.Active)
	}
	p = p.Resolve(dataDir)
	if info, ok := app.ReadRunFile(dataDir, cfg.Active); ok {
		var se *localclient.StatusError
		if _, err := app.StateAt(ctx, localBaseURL(info.BaseURL)); err == nil || errors.As(err, &se) {
			return cfe.Errorf(cfe.EUNAVAILABLE, "el agente está en ejecución (%s): deténgalo antes de restaurar", info.BaseURL)
		}
	}
	o := store.RestoreOptions{Backup: file, Store: cfg.StorePath(dataDir, cfg.Active),
		Journal: app.JournalPath(dataDir, p.Environment, cfg.Active), Confirmed: r.confirmed, AcceptForeign: r.foreign,
		Meta:    store.BackupMeta{Profile: cfg.Active, Environment: string(p.Environment), RUC: p.Company.RUC},
		Records: app.RecordChecks(0)}
	if abs, err := filepath.Abs(file); err == nil {
		o.Backup = abs
	}
	if o.Witness, err = app.WitnessPath(dataDir, p, cfg.Active); err != nil {
		fmt.Fprintf(w, "aviso: sin testigo de numeración (%s): se comprueba con el diario de numeración, el archivo actual y el servicio en línea\n", describe(err))
	}
	o.WitnessKey = app.WitnessKey(p, cfg.Active)
	h, err := app.NewHostedClient(p.Hosted, cliLogger())
	if err != nil {
		return err
	}
	askable := h != nil && h.Auth() != hosted.AuthNone
	// Nothing local bounds the numbers used since the backup when the
	// journal is missing: the agent then waits for the service, as when
	// its journal is lost.
	o.HoldWithoutService = askable
	if askable && !r.offline {
		o.Service = func(ctx context.Context, info *store.BackupInfo) store.ServiceAnswer {
			return askService(ctx, w, h, info)
		}
	}
	res, err := store.Restore(ctx, o)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "restaurada la copia %s (del %s: %d comprobantes, %d pendientes de envío; %d firmas verificadas)\n", o.Backup,
		res.Info.TakenAt.In(cfe.Montevideo).Format("02/01/2006 15:04:05"), res.Info.Counts.CFEs, res.Info.Counts.Outbox,
		res.Info.Checked.Signatures)
	if res.ServiceCompared {
		fmt.Fprintf(w, "comparada con el servicio en línea: %d comprobantes de la copia son los mismos que el servicio guarda con esos números\n", res.Compared)
	}
	if res.Foreign {
		fmt.Fprintf(w, "la copia era de otra instalación (%s) y se aceptó con --aceptar-copia-ajena; el archivo de datos reemplazado queda como anterior (%s)\n",
			res.Info.StoreID, strings.Join(res.Lineage, ", "))
	}
	if res.Held {
		fmt.Fprintln(w, "aviso: no hay diario de numeración y no se consultó el servicio en línea: el agente no firmará hasta que el servicio responda o un técnico ejecute «cfe-agent cae used-elsewhere»")
	}
	if res.Replaced != "" {
		fmt.Fprintf(w, "el archivo de datos reemplazado se conserva en %s (puede tener comprobantes posteriores a la copia)\n", res.Replaced)
	}
	for _, s := range res.Behind {
		fmt.Fprintf(w, "%s serie %s: la copia llegaba al %d; la numeración sigue en el %d (los números intermedios ya se usaron o no se usarán: repórtelos a DGI como anulados si no se usaron)\n",
			s.Type.Name(), s.Serie, s.Backup, s.Resume+1)
	}
	return nil
}

// askService asks the hosted service, for a restore, its last numbers and
// the CFEs it holds in the backup's ranges. What it cannot learn is said
// (Spanish) and left unknown: the restore goes on with the other checks, and
// the agent asks the service for its last numbers again at every start.
func askService(ctx context.Context, w io.Writer, h *hosted.Client, info *store.BackupInfo) store.ServiceAnswer {
	var ans store.ServiceAnswer
	today := cfe.DateOf(time.Now().In(cfe.Montevideo))
	hctx, cancel := context.WithTimeout(ctx, restoreHostedTimeout)
	lasts, err := h.LastNumbers(hctx, info.Ranges, today)
	cancel()
	if err != nil {
		fmt.Fprintf(w, "aviso: no se pudo consultar el servicio en línea (%s); se comprueba con el diario de numeración y el archivo actual, "+
			"no se comparan los comprobantes de la copia con los del servicio, y el agente vuelve a consultarlo al iniciar\n", describe(err))
		return ans
	}
	ans.Last, ans.LastKnown = lasts, true
	inUse := info.SeriesInUse()
	if len(inUse) == 0 {
		ans.CFEsKnown = true // the backup holds no CFE: nothing to compare
		return ans
	}
	hctx, cancel = context.WithTimeout(ctx, restoreCompareTimeout)
	held, err := h.Held(hctx, inUse, today)
	cancel()
	if err != nil {
		fmt.Fprintf(w, "aviso: no se pudieron comparar los comprobantes de la copia con los del servicio en línea (%s); se restaura sin esa comparación\n", describe(err))
		return ans
	}
	for _, c := range held {
		ans.CFEs = append(ans.CFEs, store.ServiceCFE{Type: cfe.Type(c.TipoCfe), Serie: c.Serie, Nro: c.Nro, UUID: c.UUID, CodSeguridad: c.CodSeguridad})
	}
	ans.CFEsKnown = true
	return ans
}
