package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/hosted"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
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

// Recoverer serves POST /recuperar in the running agent.
type Recoverer struct{ A *Agent }

// Recover implements localapi.Repairs: the CFE comes back and the deliverer
// is woken to send it.
func (r Recoverer) Recover(ctx context.Context, req apitype.RecoverRequest) (*apitype.RecoverResult, error) {
	res, err := RecoverCFE(ctx, r.A, req)
	if err != nil {
		return nil, err
	}
	r.A.Log.Warn("a CFE that could not be read back was recovered", "uuid", res.UUID, "tipo", int(res.TipoCFE),
		"serie", res.Serie, "nro", res.Numero, "from", res.Origen, "requeued", res.EnCola)
	if r.A.Deliverer != nil && res.EnCola {
		r.A.Deliverer.Kick()
	}
	return res, nil
}

// RecoverCFE puts the CFE req.UUID of a's store back from the first copy
// that holds it intact; the copies that could not are listed in the result.
func RecoverCFE(ctx context.Context, a *Agent, req apitype.RecoverRequest) (*apitype.RecoverResult, error) {
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
func knownBackups(a *Agent) []string {
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
			if t, ok := BackupTime(a.Name, e.Name(), auto); ok {
				all = append(all, found{filepath.Join(dir, e.Name()), t})
			}
		}
	}
	scan(ManualBackupDir(a.DataDir, a.Profile.Environment, a.Name), false)
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

// Recover recovers the CFE req.UUID of the active profile ("cfe-agent
// recuperar") through the running agent when there is one (it holds the
// store), else directly; running says which.
func Recover(ctx context.Context, opts Options, req apitype.RecoverRequest, log *slog.Logger) (*apitype.RecoverResult, bool, error) {
	dataDir, cfg, _, err := LoadConfig(opts)
	if err != nil {
		return nil, false, err
	}
	for i, f := range req.Copias {
		if abs, err := filepath.Abs(f); err == nil {
			req.Copias[i] = abs // the agent's working folder is not this one
		}
	}
	c, _, ok, err := adminClient(dataDir, cfg, 2*recoverTimeout)
	if err != nil {
		return nil, false, err
	}
	if ok {
		res, err := c.Recover(ctx, req)
		switch {
		case err == nil:
			return res, true, nil
		case !agentGone(err):
			return nil, true, &cfe.Error{Code: cfe.ErrorCode(err), Err: err, Message: cfe.ErrorMessage(err)}
		}
		// A run file left by an agent that is gone: the store is free.
	}
	a, err := Open(ctx, opts, log)
	if err != nil {
		return nil, false, err
	}
	defer a.Close()
	res, err := RecoverCFE(ctx, a, req)
	return res, false, err
}

// WriteRecovered writes the technician's report of a recovery: the copies
// set aside, where the CFE came from, and whether it is on its way to the
// hosted service (running: the agent that recovered it sends it now).
func WriteRecovered(w io.Writer, res *apitype.RecoverResult, running bool) {
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
}
