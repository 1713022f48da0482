package emulator

import (
	"bytes"
	"encoding/xml"
	"strconv"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/dgi"
)

// DGI's acknowledgements as the emulator writes them (RESP §3,
// ACKSobre.xsd, ACKCFE_DGI.xsd, ACKRepDiario.xsd), each then signed with an
// enveloped signature in DGI's profile (signer.Sign), as DGI's examples are.
// NomArch is empty: "Si la recepción fue en modalidad WS: Vacío".

func esc(s string) string {
	var b bytes.Buffer
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

func el(b *bytes.Buffer, name, value string) {
	b.WriteString("<" + name + ">" + esc(value) + "</" + name + ">")
}

func num(n int64) string { return strconv.FormatInt(n, 10) }

func motivosXML(b *bytes.Buffer, wrapper string, ms []dgi.Motivo) {
	for _, m := range ms {
		b.WriteString("<" + wrapper + ">")
		el(b, "Motivo", m.Codigo)
		el(b, "Glosa", m.Glosa)
		if m.Detalle != "" {
			el(b, "Detalle", m.Detalle)
		}
		b.WriteString("</" + wrapper + ">")
	}
}

func ackHead(root string) *bytes.Buffer {
	b := &bytes.Buffer{}
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	b.WriteString(`<` + root + ` xmlns="` + dgi.NamespaceCFE + `" version="1.0">`)
	return b
}

// ackSobre writes the ACKSobre of an envelope record, unsigned.
func ackSobre(r *envelopeRecord, at time.Time) []byte {
	b := ackHead("ACKSobre")
	b.WriteString("<Caratula>")
	el(b, "RUCReceptor", cfe.RUCDGI)
	el(b, "RUCEmisor", r.RUCEmisor)
	el(b, "IDRespuesta", num(r.IDRespuesta))
	b.WriteString("<NomArch></NomArch>")
	el(b, "FecHRecibido", dgi.FormatFechaHora(r.Received))
	el(b, "IDEmisor", num(r.IdEmisor))
	el(b, "IDReceptor", num(r.IDReceptor))
	el(b, "CantidadCFE", strconv.Itoa(r.CantCFE))
	el(b, "Tmst", dgi.FormatFechaHora(at))
	b.WriteString("</Caratula><Detalle>")
	el(b, "Estado", r.Estado)
	motivosXML(b, "MotivosRechazo", r.Motivos)
	if r.Token != "" {
		b.WriteString("<ParamConsulta>")
		el(b, "Token", r.Token)
		el(b, "Fechahora", dgi.FormatFechaHora(r.Fechahora))
		b.WriteString("</ParamConsulta>")
	}
	b.WriteString("</Detalle></ACKSobre>")
	return b.Bytes()
}

// ackCFE writes the ACKCFE of an envelope record (every CFE in one message),
// unsigned.
func ackCFE(r *envelopeRecord, idRespuesta int64, at time.Time) []byte {
	var acc, rej, cfcAcc, cfcObs int
	for _, v := range r.CFEs {
		info, _ := v.Tipo.Info()
		switch {
		case info.Contingency && v.Estado == dgi.CFCObserved:
			cfcObs++
		case info.Contingency:
			cfcAcc++
		case v.Estado == dgi.CFEReceived:
			acc++
		default:
			rej++
		}
	}
	b := ackHead("ACKCFE")
	b.WriteString("<Caratula>")
	el(b, "RUCReceptor", cfe.RUCDGI)
	el(b, "RUCEmisor", r.RUCEmisor)
	el(b, "IDRespuesta", num(idRespuesta))
	b.WriteString("<NomArch></NomArch>")
	el(b, "FecHRecibido", dgi.FormatFechaHora(r.Received))
	el(b, "IDEmisor", num(r.IdEmisor))
	el(b, "IDReceptor", num(r.IDReceptor))
	el(b, "CantenSobre", strconv.Itoa(r.CantCFE))
	el(b, "CantResponden", strconv.Itoa(len(r.CFEs)))
	el(b, "CantCFEAceptados", strconv.Itoa(acc))
	el(b, "CantCFERechazados", strconv.Itoa(rej))
	el(b, "CantCFCAceptados", strconv.Itoa(cfcAcc))
	el(b, "CantCFCObservados", strconv.Itoa(cfcObs))
	el(b, "CantOtrosRechazados", "0")
	el(b, "Tmst", dgi.FormatFechaHora(at))
	b.WriteString("</Caratula>")
	for _, v := range r.CFEs {
		b.WriteString("<ACKCFE_Det>")
		el(b, "Nro_ordinal", strconv.Itoa(v.Ordinal))
		if v.Tipo.Valid() {
			el(b, "TipoCFE", v.Tipo.String())
		}
		if v.Serie != "" {
			el(b, "Serie", v.Serie)
		}
		if v.Nro > 0 {
			el(b, "NroCFE", num(v.Nro))
		}
		if !v.FechaCFE.IsZero() {
			el(b, "FechaCFE", v.FechaCFE.String())
		}
		if !v.TmstCFE.IsZero() {
			el(b, "TmstCFE", dgi.FormatFechaHora(v.TmstCFE))
		}
		el(b, "Estado", v.Estado)
		if v.Estado == dgi.CFCObserved {
			motivosXML(b, "ObsCFC", v.Motivos)
		} else {
			motivosXML(b, "MotivosRechazoCF", v.Motivos)
		}
		if o := v.Original; o != nil {
			b.WriteString("<InfoRespOri>")
			el(b, "IDRespSobre", num(o.IDRespuesta))
			el(b, "IDEmisorSobre", num(o.IDEmisor))
			el(b, "IDReceptorSobre", num(o.IDReceptor))
			el(b, "IDTokenSobre", o.Token)
			b.WriteString("</InfoRespOri>")
		}
		b.WriteString("</ACKCFE_Det>")
	}
	b.WriteString("</ACKCFE>")
	return b.Bytes()
}

// ackRepDiario writes the ACKRepDiario of a report record, unsigned.
func ackRepDiario(r *reportRecord, at time.Time) []byte {
	b := ackHead("ACKRepDiario")
	b.WriteString("<Caratula>")
	el(b, "RUCReceptor", cfe.RUCDGI)
	el(b, "RUCEmisor", r.RUCEmisor)
	b.WriteString("<NomArch></NomArch>")
	el(b, "FecHRecibido", dgi.FormatFechaHora(r.Received))
	el(b, "IDEmisor", "0") // a report has no issuer's number (DGI's example: 0)
	el(b, "IDReceptor", num(r.IDReceptor))
	el(b, "Tmst", dgi.FormatFechaHora(at))
	b.WriteString("</Caratula><Detalle>")
	el(b, "Estado", r.Estado)
	motivosXML(b, "MotivosRechazo", r.Motivos)
	b.WriteString("</Detalle></ACKRepDiario>")
	return b.Bytes()
}
