package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/cfe-agent/cfe-agent/app"
	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/hosted"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
	"github.com/cfe-agent/cfe-agent/localapi/localclient"
	"github.com/cfe-agent/cfe-agent/signer"
	"github.com/cfe-agent/cfe-agent/store"
)

// Recovering a signed CFE whose stored record cannot be read back (issue 28
// item 3; store/quarantine.go). The outbox holds it in quarantine and
// delivers the others; /health, the tray and doctor name it. The technician
// runs «cfe-agent recuperar UUID», which the running agent serves (POST
// /recuperar) or, with the agent stopped, the command itself: the CFE is put
// back from the first copy that holds it intact (the backups named, else the
// backups the agent knows, newest first; then the hosted service's copy)
// and goes back to the outbox.
//
// A copy must be the same CFE before anything is written: the store checks
// the uuid, the number, the commit sequence and the record (store.Repair);
// verifyCopy checks that the copy's XML signature verifies, that its
// security code and QR data are the stored ones (both come from the
// signature's digest, so the document is the one signed), and that it is
// the company's.

// recoverTimeout bounds the hosted service's part of one recovery.
const recoverTimeout = 30 * time.Second

// recoverer serves POST /recuperar in the running agent.
type recoverer struct{ a *app.Agent }

// Recover implements localapi.Repairs: the CFE comes back and the deliverer
// is woken to send it.
func (r recoverer) Recover(ctx context.Context, req apitype.RecoverRequest) (*apitype.RecoverResult, error) {
	res, err := recoverCFE(ctx, r.a, req)
	if err != nil {
		return nil, err
	}
	r.a.Log.Warn("a CFE that could not be read back was recovered", "uuid", res.UUID, "tipo", int(res.TipoCFE),
		"serie", res.Serie, "nro", res.Numero, "from", res.Origen, "requeued", res.EnCola)
	if r.a.Deliverer != nil && res.EnCola {
		r.a.Deliverer.Kick()
	}
	return res, nil
}

// recoverCFE puts the CFE req.UUID of a's store back from the first copy
// that holds it intact; the copies that could not are listed in the result.
func recoverCFE(ctx context.Context, a *app.Agent, req apitype.RecoverRequest) (*apitype.RecoverResult, error) {
	const op = "recuperar"
	if err := needsRecovery(ctx, a.DB, req.UUID); err != nil {
		return nil, err
	}
	files := req.Copias
	if len(files) == 0 {
		files = knownBackups(a)
	}
	verify := verifyCopy(a.Profile.Company.RUC)
	var tried []string
	try := func(src store.RepairSource, from string) (*apitype.RecoverResult, error) {
		res, err := a.DB.Repair(ctx, req.UUID, src)
		switch cfe.ErrorCode(err) {
		case "":
			is := res.CFE
			return &apitype.RecoverResult{UUID: is.UUID, TipoCFE: is.Type, Nombre: is.Type.Name(), Serie: is.Serie,
				Numero: is.Nro, Origen: from, EnCola: res.Requeued, Descartadas: tried}, nil
		case cfe.ECONFLICT, cfe.ENOTFOUND, cfe.EINVALID:
			tried = append(tried, from+": "+cfe.ErrorMessage(err))
			return nil, nil
		}
		return nil, err // the store or the disk: no other copy would fare better
	}
	for _, f := range files {
		if abs, err := filepath.Abs(f); err == nil {
			f = abs
		}
		if res, err := try(store.RepairSource{Backup: f, Verify: verify}, f); res != nil || err != nil {
			return res, err
		}
	}
	switch c := a.Hosted; {
	case req.SinServicio:
	case c == nil || c.Auth() == hosted.AuthNone:
		tried = append(tried, "servicio en la nube: el perfil no tiene servicio o credenciales")
	default:
		if res, err := try(store.RepairSource{Fetch: hostedCopy(c), Verify: verify}, "servicio"); res != nil || err != nil {
			return res, err
		}
	}
	if len(tried) == 0 {
		tried = append(tried, "no se indicó ninguna copia y el agente no conoce ninguna copia de seguridad")
	}
	return nil, &cfe.Error{Code: cfe.ECONFLICT, Op: op, Message: fmt.Sprintf("ninguna copia tiene intacto el comprobante %s:\n  %s",
		req.UUID, strings.Join(tried, "\n  "))}
}

// needsRecovery refuses early, without trying copies, a uuid the store does
// not hold and a CFE that reads (and is not quarantined).
func needsRecovery(ctx context.Context, db *store.DB, uuid string) error {
	if uuid == "" {
		return cfe.Invalid("recuperar", cfe.FieldError{Campo: "uuid", Mensaje: "es obligatorio"})
	}
	is, err := db.FindByUUID(ctx, uuid)
	switch {
	case errors.Is(err, store.ErrRecordDamaged):
		return nil
	case err != nil:
		return err
	}
	held, err := db.Quarantined(ctx)
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(held, func(q cfe.Quarantined) bool { return q.UUID == uuid }) {
		return &cfe.Error{Code: cfe.ECONFLICT, Message: fmt.Sprintf("el comprobante %s %s-%d (uuid %s) se puede leer: no hay nada que recuperar",
			is.Type.Name(), is.Serie, is.Nro, uuid)}
	}
	return nil
}

// knownBackups lists the backups of a's profile the agent knows, newest
// first: its manual backups folder and the profile's backup.folder.
func knownBackups(a *app.Agent) []string {
	type found struct {
		path string
		at   time.Time
	}
	var all []found
	scan := func(dir string, auto bool) {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		for _, e := range entries {
			if t, ok := app.BackupTime(a.Name, e.Name(), auto); ok {
				all = append(all, found{filepath.Join(dir, e.Name()), t})
			}
		}
	}
	scan(app.ManualBackupDir(a.DataDir, a.Profile.Environment, a.Name), false)
	if a.Profile.Backup.Enabled() {
		scan(a.Profile.Backup.Folder, true)
	}
	slices.SortFunc(all, func(x, y found) int { return y.at.Compare(x.at) })
	out := make([]string, len(all))
	for i, f := range all {
		out[i] = f.path
	}
	return out
}

// verifyCopy checks a copy of a CFE before it is put back (see above).
func verifyCopy(ruc string) func(*cfe.Issued) error {
	return func(is *cfe.Issued) error {
		refused := func(format string, args ...any) error {
			return &cfe.Error{Code: cfe.ECONFLICT, Message: "la copia no sirve: " + fmt.Sprintf(format, args...)}
		}
		v, err := signer.Verify(is.XML, signer.VerifyOptions{})
		if err != nil {
			return refused("la firma de su XML no verifica (%s)", cfe.ErrorMessage(err))
		}
		doc, err := cfe.ParseXML(is.XML)
		if err != nil {
			return refused("su XML no se puede leer (%s)", cfe.ErrorMessage(err))
		}
		switch {
		case cfe.SecurityCode(v.DigestValue) != is.CodSeguridad:
			return refused("su código de seguridad no es el guardado: es otro documento")
		case cfe.QRData(doc, v.DigestValue) != is.DatosQR:
			return refused("los datos de su QR no son los guardados: es otro documento")
		case doc.Emisor.RUCEmisor != ruc:
			return refused("es de otro RUC (%s)", doc.Emisor.RUCEmisor)
		}
		if cr := signer.CertInfo(v.Certificate, time.Now()).RUC; cr != "" && cr != ruc {
			return refused("la firmó el certificado de otro RUC (%s)", cr)
		}
		return nil
	}
}

// hostedCopy fetches the signed XML of a CFE from the hosted service: by its
// hosted id when it was delivered, else found by uuid among the CFEs the
// service holds of its type around its signature date (it holds one the
// agent signed only when a delivery reached it but its answer was lost).
func hostedCopy(c *hosted.Client) func(ctx context.Context, known *cfe.Issued) ([]byte, error) {
	return func(ctx context.Context, known *cfe.Issued) ([]byte, error) {
		ctx, cancel := context.WithTimeout(ctx, recoverTimeout)
		defer cancel()
		id := known.Delivery.HostedID
		if id == 0 {
			day := cfe.DateOf(known.TmstFirma.In(cfe.Montevideo))
			list, err := c.Search(ctx, known.Type, day.AddDays(-1), day.AddDays(1))
			if err != nil {
				return nil, unreachable(err)
			}
			for _, s := range list {
				if s.UUID == known.UUID && s.TipoCfe == int(known.Type) && s.Serie == known.Serie && s.Nro == known.Nro {
					id = s.ID
					break
				}
			}
			if id == 0 {
				return nil, cfe.Errorf(cfe.ENOTFOUND, "el servicio en la nube no tiene el comprobante (no llegó a enviarse): recupérelo de una copia de seguridad")
			}
		}
		comp, err := c.Comprobante(ctx, id)
		if err != nil {
			return nil, unreachable(err)
		}
		if comp.XmlFirmado == "" {
			return nil, cfe.Errorf(cfe.ENOTFOUND, "el servicio en la nube no devolvió el XML firmado del comprobante %d", id)
		}
		return []byte(comp.XmlFirmado), nil
	}
}

// unreachable is a failure to ask the hosted service, as a reason to try no
// further there (ECONFLICT: the next copy is tried, and the message says
// why this one was not used).
func unreachable(err error) error {
	return &cfe.Error{Code: cfe.ECONFLICT, Err: err, Message: "no se pudo consultar: " + cfe.ErrorMessage(err)}
}

func newRecoverCommand(opts *app.Options) *cobra.Command {
	var req apitype.RecoverRequest
	cmd := &cobra.Command{
		Use:   "recuperar UUID",
		Short: "Recupera un comprobante dañado (en cuarentena) de una copia de seguridad o del servicio en la nube",
		Long: "Un comprobante firmado cuyo registro guardado está dañado no se envía ni se imprime: queda en cuarentena\n" +
			"(«cfe-agent doctor» y /state lo nombran). Este comando lo recupera de la primera copia que lo tiene intacto:\n" +
			"las copias indicadas con --copia o, si no se indica ninguna, las copias de seguridad que conoce el agente\n" +
			"(su carpeta backups y la carpeta backup.folder del perfil), de la más nueva a la más vieja, y después la\n" +
			"copia del servicio en la nube (salvo --sin-servicio). Antes de escribir comprueba que es el mismo\n" +
			"comprobante (uuid, número, registro, firma del XML, código de seguridad y QR). Vuelve a la cola de envíos\n" +
			"y el agente lo envía. Con el agente en ejecución lo hace el agente; si no, este comando.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			req.UUID = args[0]
			res, running, err := runRecover(cmd.Context(), *opts, req)
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			for _, d := range res.Descartadas {
				fmt.Fprintf(w, "descartada: %s\n", d)
			}
			from := "la copia del servicio en la nube"
			if res.Origen != "servicio" {
				from = "la copia de seguridad " + res.Origen
			}
			fmt.Fprintf(w, "recuperado: %s %s-%d (uuid %s), de %s\n", res.Nombre, res.Serie, res.Numero, res.UUID, from)
			switch {
			case !res.EnCola:
			case running:
				fmt.Fprintln(w, "volvió a la cola de envíos: el agente lo envía ahora")
			default:
				fmt.Fprintln(w, "volvió a la cola de envíos: el agente lo envía cuando se inicie")
			}
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&req.Copias, "copia", nil, "`ARCHIVO` de copia de seguridad de donde recuperarlo (puede repetirse; si no se indica: las copias que conoce el agente)")
	cmd.Flags().BoolVar(&req.SinServicio, "sin-servicio", false, "no buscar la copia del servicio en la nube")
	return cmd
}

// runRecover recovers through the running agent when there is one (it holds
// the store), else directly; running says which.
func runRecover(ctx context.Context, opts app.Options, req apitype.RecoverRequest) (*apitype.RecoverResult, bool, error) {
	dataDir, cfg, _, err := app.LoadConfig(opts)
	if err != nil {
		return nil, false, err
	}
	for i, f := range req.Copias {
		if abs, err := filepath.Abs(f); err == nil {
			req.Copias[i] = abs // the agent's working folder is not this one
		}
	}
	if info, ok := app.ReadRunFile(dataDir, cfg.Active); ok && info.AdminToken != "" {
		co := localclient.Options{AdminToken: info.AdminToken, HTTPClient: &http.Client{Timeout: 2 * recoverTimeout}}
		if p, ok := cfg.ActiveProfile(); ok && p.LAN.Enabled && len(p.LAN.Tokens) > 0 {
			co.Token = p.LAN.Tokens[0].Value() // as runBackup: a LAN agent sees this machine's own address
		}
		c, err := localclient.New(localBaseURL(info.BaseURL), co)
		if err != nil {
			return nil, false, err
		}
		res, err := c.Recover(ctx, req)
		switch {
		case err == nil:
			return res, true, nil
		case !errors.Is(err, syscall.ECONNREFUSED):
			return nil, true, &cfe.Error{Code: cfe.ErrorCode(err), Err: err, Message: cfe.ErrorMessage(err)}
		}
		// A run file left by an agent that is gone: the store is free.
	}
	a, err := app.Open(ctx, opts, cliLogger())
	if err != nil {
		return nil, false, err
	}
	defer a.Close()
	res, err := recoverCFE(ctx, a, req)
	return res, false, err
}
