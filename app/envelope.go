package app

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"strconv"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/signer"
	"github.com/cfe-agent/cfe-agent/store"
)

// Envelopes ("cfe-agent envelope"): DGI's envelope (sobre) of CFEs signed by
// this agent, for DGI or for an electronic receiver, from the local store.

// EnvelopeRequest is the technician's envelope.
type EnvelopeRequest struct {
	// The CFEs it carries: by uuid, and by signing date (AAAA-MM-DD) and
	// type (NewEnvelopeSelection).
	UUIDs    []string
	From, To string
	Tipo     int
	// Receptor is the RUC of the receiving company: its envelope
	// (EnvioCFE_entreEmpresas) instead of DGI's; "" for DGI's.
	Receptor string
	// IdEmisor is the envelope's number (Idemisor); nil: the time in Unix
	// seconds, which grows with every envelope.
	IdEmisor *int64
	// Out is the file to write; "" names it as DGI asks,
	// Sob_RUC_AAAAMMDD_Idemisor.xml, in the working folder.
	Out string
}

// EnvelopeSelection is the CFEs an envelope carries: the named uuids, and
// those signed in a date range (of a type, when one is given).
type EnvelopeSelection struct {
	UUIDs    []string
	From, To cfe.Date // zero: no date selection
	Tipo     cfe.Type
}

// NewEnvelopeSelection reads the technician's selection: uuids, and the
// first and last signing dates (AAAA-MM-DD; one of them alone is that day)
// with an optional type (0: any), which narrows the dates' CFEs only.
func NewEnvelopeSelection(uuids []string, from, to string, tipo int) (EnvelopeSelection, error) {
	s := EnvelopeSelection{UUIDs: uuids, Tipo: cfe.Type(tipo)}
	if tipo != 0 && !s.Tipo.Valid() {
		return s, cfe.Errorf(cfe.EINVALID, "--tipo: %d no es un tipo de CFE", tipo)
	}
	if from == "" {
		from = to
	}
	if to == "" {
		to = from
	}
	if from != "" {
		var err error
		if s.From, err = cfe.ParseDate(from); err != nil {
			return s, cfe.Errorf(cfe.EINVALID, "--desde: %q no es una fecha AAAA-MM-DD", from)
		}
		if s.To, err = cfe.ParseDate(to); err != nil {
			return s, cfe.Errorf(cfe.EINVALID, "--hasta: %q no es una fecha AAAA-MM-DD", to)
		}
		if s.To.Before(s.From) {
			return s, cfe.Errorf(cfe.EINVALID, "--hasta no puede ser anterior a --desde")
		}
	}
	if len(uuids) == 0 && s.From.IsZero() {
		return s, cfe.Errorf(cfe.EINVALID, "indique los CFE del sobre con --uuid o con --desde/--hasta")
	}
	if tipo != 0 && s.From.IsZero() {
		return s, cfe.Errorf(cfe.EINVALID, "--tipo acota los CFE elegidos por fecha: indique también --desde/--hasta")
	}
	return s, nil
}

// EnvelopeWritten is what WriteEnvelope wrote.
type EnvelopeWritten struct {
	Kind     cfe.EnvelopeKind
	Rut      string // the receiver's RUC (DGI's for its envelope)
	CFEs     int
	IdEmisor int64
	File     string
}

// Write writes the technician's report of the envelope.
func (e *EnvelopeWritten) Write(w io.Writer) {
	fmt.Fprintf(w, "sobre %s para el RUC %s con %d CFE (Idemisor %d) escrito en %s\n", e.Kind.Root(), e.Rut, e.CFEs, e.IdEmisor, e.File)
}

// WriteEnvelope writes the envelope of the active profile's signed CFEs that
// req selects: each CFE as it was signed, byte for byte, the certificate
// that signed them in the carátula. The agent must be stopped (it reads the
// store).
func WriteEnvelope(ctx context.Context, opts Options, req EnvelopeRequest, log *slog.Logger) (*EnvelopeWritten, error) {
	kind, rut := cfe.EnvelopeDGI, cfe.RUCDGI
	if req.Receptor != "" {
		if !cfe.ValidRUC(req.Receptor) {
			return nil, cfe.Errorf(cfe.EINVALID, "--receptor: %q no es un RUC válido", req.Receptor)
		}
		kind, rut = cfe.EnvelopeReceiver, req.Receptor
	}
	sel, err := NewEnvelopeSelection(req.UUIDs, req.From, req.To, req.Tipo)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	id := now.Unix()
	if req.IdEmisor != nil {
		id = *req.IdEmisor
	}
	if id < 0 || id > cfe.MaxEnvelopeID {
		return nil, cfe.Errorf(cfe.EINVALID, "--id-emisor: debe ser un número de 0 a %d", int64(cfe.MaxEnvelopeID))
	}
	a, err := Open(ctx, opts, log)
	if err != nil {
		return nil, err
	}
	defer a.Close()
	issued, err := sel.collect(ctx, a.DB, kind, rut)
	if err != nil {
		return nil, err
	}
	env := signer.EnvelopeRequest{Kind: kind, RutReceptor: rut, IdEmisor: id, Fecha: now}
	for _, c := range issued {
		ec := cfe.EnvelopeCFE{XML: c.XML}
		if kind == cfe.EnvelopeReceiver {
			ec.Adenda = c.Adenda
		}
		env.CFEs = append(env.CFEs, ec)
	}
	prepared, err := signer.PrepareEnvelope(env)
	if err != nil {
		return nil, err
	}
	b, err := cfe.BuildEnvelope(prepared)
	if err != nil {
		return nil, err
	}
	out := req.Out
	if out == "" {
		out = fmt.Sprintf("Sob_%s_%s_%d.xml", prepared.Caratula.RUCEmisor, now.In(cfe.Montevideo).Format("20060102"), id)
	}
	if err := os.WriteFile(out, b, 0o600); err != nil {
		return nil, fmt.Errorf("no se puede escribir %s: %w", out, UnwrapPathError(err))
	}
	return &EnvelopeWritten{Kind: kind, Rut: rut, CFEs: len(issued), IdEmisor: id, File: out}, nil
}

// collect reads the selected CFEs from the store: the named uuids in order,
// then those signed in the date range (of the type, and addressed to the
// receiver for its envelope), without repeating one.
func (s EnvelopeSelection) collect(ctx context.Context, db *store.DB, kind cfe.EnvelopeKind, rut string) ([]*cfe.Issued, error) {
	seen := map[string]bool{}
	out, err := s.byUUID(ctx, db, seen)
	if err != nil {
		return nil, err
	}
	if !s.From.IsZero() {
		dated, err := s.byDate(ctx, db, kind, rut, seen)
		if err != nil {
			return nil, err
		}
		out = append(out, dated...)
	}
	if len(out) > cfe.MaxEnvelopeCFEs {
		return nil, cfe.Errorf(cfe.EINVALID, "se eligieron %d CFE y un sobre admite hasta %d (DGI, Formato del Sobre): acote las fechas o el tipo",
			len(out), cfe.MaxEnvelopeCFEs)
	}
	return out, nil
}

// byUUID reads the named CFEs, in order, each once.
func (s EnvelopeSelection) byUUID(ctx context.Context, db *store.DB, seen map[string]bool) ([]*cfe.Issued, error) {
	var out []*cfe.Issued
	for _, u := range s.UUIDs {
		if seen[u] {
			continue
		}
		c, err := db.FindByUUID(ctx, u)
		if err != nil {
			return nil, fmt.Errorf("--uuid %s: %w", u, err)
		}
		seen[u] = true
		out = append(out, c)
	}
	return out, nil
}

// byDate reads the CFEs signed in the date range, of the type, addressed to
// the receiver for its envelope, and not seen yet. Finding none is an error
// when no uuid was named either.
func (s EnvelopeSelection) byDate(ctx context.Context, db *store.DB, kind cfe.EnvelopeKind, rut string, seen map[string]bool) ([]*cfe.Issued, error) {
	list, err := db.ListByDate(ctx, s.From, s.To, math.MaxInt32)
	if err != nil {
		return nil, err
	}
	var out []*cfe.Issued
	for _, c := range list {
		if seen[c.UUID] || (s.Tipo != 0 && c.Type != s.Tipo) {
			continue
		}
		if kind == cfe.EnvelopeReceiver {
			if h, err := cfe.ReadCFEHead(c.XML); err != nil || !h.AddressedTo(rut) {
				continue
			}
		}
		seen[c.UUID] = true
		out = append(out, c)
	}
	if len(out) == 0 && len(s.UUIDs) == 0 {
		what := "ningún CFE firmado del " + s.From.String() + " al " + s.To.String()
		if s.Tipo != 0 {
			what += " de tipo " + strconv.Itoa(int(s.Tipo))
		}
		if kind == cfe.EnvelopeReceiver {
			what += " dirigido al RUC " + rut
		}
		return nil, cfe.Errorf(cfe.ENOTFOUND, "%s en este agente", what)
	}
	return out, nil
}
