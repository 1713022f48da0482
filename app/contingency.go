package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/issuer"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
)

// Keying in paper contingency receipts in a batch ("cfe-agent contingencia
// ingresar --archivo F", POST /contingencia): every receipt of the file is
// checked before any is signed, and all are stored or none
// (issuer.IssueKeyedBatch, docs/contingencia.md).

// keyInRequestTimeout bounds the running agent's work on a batch.
const keyInRequestTimeout = 5 * time.Minute

// ReadKeyInFile reads a batch file: a JSON array of /sign-cfe bodies, or
// one body after another (one per line, as JSON Lines). Each element is
// returned as it is, for DecodeKeyIn. Errors: EINVALID naming the file when
// it is not JSON of that shape or holds nothing.
func ReadKeyInFile(path string) ([]json.RawMessage, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, cfe.Errorf(cfe.EINVALID, "no se puede leer %s: %v", path, UnwrapPathError(err))
	}
	var out []json.RawMessage
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] == '[' {
		if err := json.Unmarshal(t, &out); err != nil {
			return nil, cfe.Errorf(cfe.EINVALID, "%s no es una lista JSON de solicitudes de firma: %v", path, err)
		}
	} else {
		dec := json.NewDecoder(bytes.NewReader(b))
		for {
			var m json.RawMessage
			if err := dec.Decode(&m); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				return nil, cfe.Errorf(cfe.EINVALID, "%s: la solicitud %d no es JSON: %v", path, len(out)+1, err)
			}
			out = append(out, m)
		}
	}
	if len(out) == 0 {
		return nil, cfe.Errorf(cfe.EINVALID, "%s no tiene comprobantes para ingresar", path)
	}
	return out, nil
}

// KeyIn keys in the batch raws (each a /sign-cfe body) all or nothing with
// a's issuer, and reports each line. A line that cannot be read as a
// request is refused like one the issuer refuses: nothing is stored.
func KeyIn(ctx context.Context, a *Agent, raws []json.RawMessage) *apitype.KeyInResult {
	res := &apitype.KeyInResult{Lineas: make([]apitype.KeyInLine, len(raws))}
	reqs := make([]*cfe.Request, len(raws))
	unreadable := 0
	for i, raw := range raws {
		l := &res.Lineas[i]
		l.Linea = i + 1
		req, err := cfe.DecodeRequest(bytes.NewReader(raw))
		if err != nil {
			refuse(l, err)
			unreadable++
			continue
		}
		reqs[i] = req
		l.UUID = req.UUID
		if req.CFE != nil {
			l.TipoCFE, l.Serie, l.Numero = req.CFE.IdDoc.TipoCfe, req.CFE.IdDoc.Serie, req.CFE.IdDoc.Numero
		}
	}
	var lines []issuer.KeyedLine
	var err error
	if unreadable == 0 {
		lines, err = a.Issuer.IssueKeyedBatch(ctx, reqs)
	}
	refused := unreadable
	for i, l := range lines {
		line := &res.Lineas[i]
		switch {
		case l.Err != nil:
			refuse(line, l.Err)
			refused++
		case l.Issued != nil && err == nil:
			line.UUID, line.TipoCFE, line.Serie, line.Numero = l.Issued.UUID, l.Issued.Type, l.Issued.Serie, l.Issued.Nro
			line.Estado = apitype.KeyInStored
			if l.Replayed {
				line.Estado = apitype.KeyInReplayed
			} else {
				res.Ingresados++
			}
		}
	}
	for i := range res.Lineas {
		if res.Lineas[i].Estado == "" {
			res.Lineas[i].Estado = apitype.KeyInHeld
		}
	}
	switch {
	case refused > 0:
		res.Mensaje = fmt.Sprintf("%d de %d comprobantes no se pueden ingresar: no se ingresó ninguno; corrija el archivo y vuelva a ingresarlo entero", refused, len(raws))
	case err != nil:
		res.Mensaje = "no se ingresó ningún comprobante: " + cfe.ErrorMessage(err)
		if cfe.RespuestaOf(err) == cfe.RespErrorInterno && !cfe.UserFacingFault(err) {
			a.Log.Error("keying in contingency receipts failed", "err", err)
		}
	default:
		res.OK = true
		res.Mensaje = fmt.Sprintf("%d comprobantes de contingencia ingresados, %d ya estaban ingresados", res.Ingresados, len(raws)-res.Ingresados)
	}
	return res
}

func refuse(l *apitype.KeyInLine, err error) {
	l.Estado, l.Mensaje, l.Errores = apitype.KeyInRefused, cfe.ErrorMessage(err), cfe.ListedFields(err)
}

// KeyInner implements localapi.KeyIn (POST /contingencia) for a serving
// agent.
type KeyInner struct{ A *Agent }

// KeyIn keys in a batch (localapi.KeyIn).
func (k KeyInner) KeyIn(ctx context.Context, raws []json.RawMessage) *apitype.KeyInResult {
	return KeyIn(ctx, k.A, raws)
}

// KeyInFile is "cfe-agent contingencia ingresar --archivo F": through the
// running agent when there is one (it holds the store), else on the store
// itself.
func KeyInFile(ctx context.Context, opts Options, path string, log *slog.Logger) (*apitype.KeyInResult, error) {
	raws, err := ReadKeyInFile(path)
	if err != nil {
		return nil, err
	}
	dataDir, cfg, _, err := LoadConfig(opts)
	if err != nil {
		return nil, err
	}
	c, info, ok, err := adminClient(dataDir, cfg, keyInRequestTimeout)
	if err != nil {
		return nil, err
	}
	if ok {
		res, err := c.KeyIn(ctx, raws)
		switch {
		case err == nil:
			return res, nil
		case !agentGone(err):
			return nil, &cfe.Error{Code: cfe.ErrorCode(err), Err: err,
				Message: fmt.Sprintf("el agente en ejecución (%s) no ingresó los comprobantes: %s", info.BaseURL, cfe.ErrorMessage(err))}
		}
	}
	a, err := Open(ctx, opts, log)
	if err != nil {
		return nil, err
	}
	defer a.Close()
	return KeyIn(ctx, a, raws), nil
}

// WriteKeyInResult writes the technician's report, a line per receipt.
func WriteKeyInResult(w io.Writer, r *apitype.KeyInResult) {
	for _, l := range r.Lineas {
		what := fmt.Sprintf("%s %s-%d", l.TipoCFE.Name(), l.Serie, l.Numero)
		if l.TipoCFE == 0 {
			what = "(sin tipo)"
		}
		fmt.Fprintf(w, "línea %d: %s: %s", l.Linea, what, l.Estado)
		if l.UUID != "" {
			fmt.Fprintf(w, " (uuid %s)", l.UUID)
		}
		fmt.Fprintln(w)
		if len(l.Errores) == 0 && l.Mensaje != "" {
			fmt.Fprintf(w, "  %s\n", l.Mensaje)
		}
		for _, f := range l.Errores {
			fmt.Fprintf(w, "  %s: %s\n", f.Campo, f.Mensaje)
		}
	}
	fmt.Fprintln(w, r.Mensaje)
}
