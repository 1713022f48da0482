package app

import (
	"context"
	"slices"
	"testing"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// TestNewEnvelopeSelection: envelope's selection flags, the dates read in
// either order of presence, and each refusal naming its flag.
func TestNewEnvelopeSelection(t *testing.T) {
	t.Parallel()
	d := func(s string) cfe.Date {
		v, err := cfe.ParseDate(s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	tests := []struct {
		name     string
		uuids    []string
		from, to string
		tipo     int
		want     EnvelopeSelection
		err      string
	}{
		{"uuids", []string{"u1", "u2"}, "", "", 0, EnvelopeSelection{UUIDs: []string{"u1", "u2"}}, ""},
		{"a range of a type", nil, "2026-11-01", "2026-11-30", 111,
			EnvelopeSelection{From: d("2026-11-01"), To: d("2026-11-30"), Tipo: 111}, ""},
		{"from alone is that day", nil, "2026-11-05", "", 0, EnvelopeSelection{From: d("2026-11-05"), To: d("2026-11-05")}, ""},
		{"to alone is that day", nil, "", "2026-11-05", 0, EnvelopeSelection{From: d("2026-11-05"), To: d("2026-11-05")}, ""},
		{"nothing", nil, "", "", 0, EnvelopeSelection{}, "indique los CFE del sobre con --uuid o con --desde/--hasta"},
		{"no type", nil, "2026-11-01", "", 999, EnvelopeSelection{}, "--tipo: 999 no es un tipo de CFE"},
		{"a type without dates", []string{"u1"}, "", "", 101, EnvelopeSelection{}, "--tipo acota los CFE elegidos por fecha: indique también --desde/--hasta"},
		{"bad from", nil, "1/11/2026", "2026-11-30", 0, EnvelopeSelection{}, `--desde: "1/11/2026" no es una fecha AAAA-MM-DD`},
		{"bad to", nil, "2026-11-01", "mañana", 0, EnvelopeSelection{}, `--hasta: "mañana" no es una fecha AAAA-MM-DD`},
		{"backwards", nil, "2026-11-30", "2026-11-01", 0, EnvelopeSelection{}, "--hasta no puede ser anterior a --desde"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := NewEnvelopeSelection(tt.uuids, tt.from, tt.to, tt.tipo)
			if tt.err != "" {
				if cfe.ErrorCode(err) != cfe.EINVALID || cfe.ErrorMessage(err) != tt.err {
					t.Errorf("error %v, want EINVALID %q", err, tt.err)
				}
				return
			}
			if err != nil || !slices.Equal(got.UUIDs, tt.want.UUIDs) || got.From != tt.want.From || got.To != tt.want.To || got.Tipo != tt.want.Tipo {
				t.Errorf("NewEnvelopeSelection = %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

// TestEnvelopeSelection_collect: over a real store, the named uuids come
// first in their order, then the day's CFEs of the type without repeats; a
// receiver's envelope takes only the CFEs addressed to it; a day with
// nothing is ENOTFOUND naming what was asked.
func TestEnvelopeSelection_collect(t *testing.T) {
	t.Parallel()
	s := newIssuing(t)
	const client, other = "214844360018", "215071660012"
	t1 := s.sign(t, "00000000-0000-4000-8000-000000000001", 101, "")
	f1 := s.sign(t, "00000000-0000-4000-8000-000000000002", 111, client)
	t2 := s.sign(t, "00000000-0000-4000-8000-000000000003", 101, "")
	f2 := s.sign(t, "00000000-0000-4000-8000-000000000004", 111, other)
	today := cfe.DateOf(t1.TmstFirma.In(cfe.Montevideo))
	if cfe.DateOf(f2.TmstFirma.In(cfe.Montevideo)) != today {
		t.Skip("the CFEs were signed on both sides of midnight")
	}
	ctx := context.Background()
	uuids := func(list []*cfe.Issued) []string {
		out := make([]string, len(list))
		for i, c := range list {
			out[i] = c.UUID
		}
		return out
	}
	tests := []struct {
		name string
		sel  EnvelopeSelection
		kind cfe.EnvelopeKind
		rut  string
		want []string
		// anyOrder: the store lists a day's CFEs by signing time, which
		// ties within a second.
		anyOrder bool
	}{
		{"uuids in their order, once", EnvelopeSelection{UUIDs: []string{t2.UUID, t1.UUID, t2.UUID}}, cfe.EnvelopeDGI, cfe.RUCDGI,
			[]string{t2.UUID, t1.UUID}, false},
		{"uuids, then the day's e-Tickets", EnvelopeSelection{UUIDs: []string{f2.UUID, t2.UUID}, From: today, To: today, Tipo: 101},
			cfe.EnvelopeDGI, cfe.RUCDGI, []string{f2.UUID, t2.UUID, t1.UUID}, false},
		{"the day, for DGI", EnvelopeSelection{From: today, To: today}, cfe.EnvelopeDGI, cfe.RUCDGI,
			[]string{t1.UUID, f1.UUID, t2.UUID, f2.UUID}, true},
		{"the day, for a receiver", EnvelopeSelection{From: today, To: today}, cfe.EnvelopeReceiver, client, []string{f1.UUID}, false},
	}
	for _, tt := range tests {
		got, err := tt.sel.collect(ctx, s.db, tt.kind, tt.rut)
		ids := uuids(got)
		if tt.anyOrder {
			slices.Sort(ids)
		}
		if err != nil || !slices.Equal(ids, tt.want) {
			t.Errorf("%s: collect = %v, %v; want %v", tt.name, uuids(got), err, tt.want)
		}
	}
	tomorrow := today.AddDays(1)
	_, err := EnvelopeSelection{From: tomorrow, To: tomorrow, Tipo: 111}.collect(ctx, s.db, cfe.EnvelopeReceiver, client)
	if want := "ningún CFE firmado del " + tomorrow.String() + " al " + tomorrow.String() + " de tipo 111 dirigido al RUC " + client +
		" en este agente"; cfe.ErrorCode(err) != cfe.ENOTFOUND || cfe.ErrorMessage(err) != want {
		t.Errorf("an empty day: %v, want ENOTFOUND %q", err, want)
	}
	if _, err := (EnvelopeSelection{UUIDs: []string{"00000000-0000-4000-8000-00000000000f"}}).collect(ctx, s.db, cfe.EnvelopeDGI, cfe.RUCDGI); cfe.ErrorCode(err) != cfe.ENOTFOUND {
		t.Errorf("an unknown uuid: %v, want ENOTFOUND", err)
	}
}
