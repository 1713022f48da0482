package app

import (
	"fmt"
	"strings"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
	"github.com/cfe-agent/cfe-agent/profiles"
	"github.com/cfe-agent/cfe-agent/store"
)

// The doctor's checks of what keeps numbering and receipts safe: a held
// numbering, the numbering witness, the backups and the quarantined CFEs.

// numbering reports a store that refuses to number until it knows where
// numbering stands (docs/numbering.md).
func (d *doctor) numbering(r *apitype.StateReport) {
	n := r.Numeracion
	if n == nil {
		return
	}
	msg := n.Motivo + "; se espera la consulta al servicio en línea o «cfe-agent cae used-elsewhere TIPO SERIE HASTA»"
	if len(n.SeriesConfirmadas) > 0 {
		msg += " (ya confirmadas: " + strings.Join(n.SeriesConfirmadas, ", ") + ")"
	}
	d.line(CheckFail, "numeración", "%s", msg)
}

// witness reports the numbering witness of the profile: where it is, how far
// it says this machine numbered, and whether the data directory is behind it
// (an older copy put back).
func (d *doctor) witness(dataDir, name string, p profiles.Profile) {
	const check = "testigo de numeración"
	path, err := WitnessPath(dataDir, p, name)
	if err != nil {
		d.line(CheckWarn, check, "sin lugar para el testigo (%s): una copia vieja de la carpeta de datos puesta de vuelta no se detecta; "+
			"indique una carpeta fuera de la carpeta de datos con %s", cfe.Describe(err), profiles.EnvWitnessDir)
		return
	}
	c, err := store.CheckWitness(path, WitnessKey(p, name), JournalPath(dataDir, p.Environment, name))
	switch {
	case err != nil:
		d.line(CheckWarn, check, "%s no se puede leer (%v): al iniciar, el agente lo aparta y escribe uno nuevo", path, err)
	case !c.Found:
		d.line(CheckWarn, check, "%s no existe todavía: el agente lo escribe al iniciar (primer inicio en este equipo, "+
			"o la carpeta de datos vino de otro equipo)", path)
	case c.Behind:
		d.line(CheckFail, check, "%s: la carpeta de datos es una copia anterior a lo que este equipo numeró (el testigo registra %s; "+
			"generación %d, el diario de la carpeta de datos %d): el agente no numera esas series hasta que el servicio en línea responda "+
			"o un técnico confirme el último número usado con «cfe-agent cae used-elsewhere»", path, describeWitnessMarks(c.Marks),
			c.Generation, c.JournalGeneration)
	case c.Lagging:
		d.line(CheckWarn, check, "%s no está al día (generación %d, el diario de numeración va por la %d): no se pudo escribir, o el agente "+
			"se ejecutó con otra carpeta de testigo (%s); registra %s", path, c.Generation, c.JournalGeneration,
			profiles.EnvWitnessDir, describeWitnessMarks(c.Marks))
	default:
		d.line(CheckOK, check, "%s (escrito el %s): registra %s; la carpeta de datos está al día", path,
			c.WrittenAt.In(cfe.Montevideo).Format("02/01/2006 15:04:05"), describeWitnessMarks(c.Marks))
	}
}

// describeWitnessMarks lists a witness's marks in Spanish.
func describeWitnessMarks(marks []store.WitnessMark) string {
	var parts []string
	for _, m := range marks {
		if m.Bound <= 0 {
			continue
		}
		s := fmt.Sprintf("%s serie %s hasta el %d", m.Type.Name(), m.Serie, m.Last)
		if m.Bound > m.Last {
			s += fmt.Sprintf(" (reservado hasta el %d)", m.Bound)
		}
		parts = append(parts, s)
	}
	if len(parts) == 0 {
		return "ningún número todavía"
	}
	return strings.Join(parts, ", ")
}

// backup is the doctor's line on the backups: WARN when automatic backups
// are late or the last one failed, or when there are none configured.
func (d *doctor) backup(r *apitype.StateReport) {
	b := r.Backup
	if b == nil {
		return
	}
	last := "ninguna"
	if b.Ultima != nil {
		last = fmt.Sprintf("%s (%s, %s)", b.Ultima.Archivo, b.Ultima.At.Format("02/01/2006 15:04"),
			cfe.Hace(time.Duration(b.Ultima.EdadS)*time.Second))
	}
	switch {
	case b.Error != "":
		d.line(CheckWarn, "copias de seguridad", "la última falló: %s; última buena: %s", b.Error, last)
	case !b.Automaticas:
		d.line(CheckWarn, "copias de seguridad", "no hay copias automáticas (configure backup.folder en el perfil, en otro disco); última: %s", last)
	case b.Status != apitype.HealthOK:
		d.line(CheckWarn, "copias de seguridad", "atrasadas: última %s; período %s en %s", last, time.Duration(b.PeriodoS)*time.Second, b.Carpeta)
	default:
		d.line(CheckOK, "copias de seguridad", "última %s; cada %s en %s, se conservan %d", last, time.Duration(b.PeriodoS)*time.Second, b.Carpeta, b.Conservar)
	}
}

// quarantine names each signed CFE whose stored record cannot be read back
// and how to recover it: a FAIL, since a signed receipt does not reach the
// hosted service (nor DGI) until a technician acts, although the agent
// signs (/health is degraded).
func (d *doctor) quarantine(r *apitype.StateReport) {
	o := r.Outbox
	where := "las copias de seguridad del agente, de la más nueva a la más vieja"
	if b := r.Backup; b != nil && b.Ultima != nil {
		where += " (la última: " + b.Ultima.Archivo + ")"
	}
	for _, q := range o.Quarantine {
		name := "con uuid " + q.UUID
		if q.Nombre != "" {
			name = fmt.Sprintf("%s %s-%d (uuid %s)", q.Nombre, q.Serie, q.Nro, q.UUID)
		}
		d.line(CheckFail, "comprobante dañado", "%s, en cuarentena desde el %s: %s; no se envía al servicio en la nube ni se imprime, "+
			"y su número sigue usado. Recupérelo con «cfe-agent recuperar %s»: lo busca en %s y después en el servicio en la nube; "+
			"con «--copia ARCHIVO» use otra copia de seguridad que lo tenga", name, q.Since.In(cfe.Montevideo).Format("02/01/2006 15:04"),
			q.Reason, q.UUID, where)
	}
	if more := o.Quarantined - len(o.Quarantine); more > 0 {
		d.line(CheckFail, "comprobante dañado", "y %s en cuarentena: con tantos, el archivo de datos está muy dañado; restaure una copia de seguridad («cfe-agent restore»)",
			cfe.Count(int64(more), "comprobante dañado más", "comprobantes dañados más"))
	}
}
