package main

import (
	"fmt"
	"strings"

	"github.com/cfe-agent/cfe-agent/app"
	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/profiles"
	"github.com/cfe-agent/cfe-agent/store"
)

// witness reports the numbering witness of the profile: where it is, how far
// it says this machine numbered, and whether the data directory is behind it
// (an older copy put back).
func (d *doctor) witness(dataDir, name string, p profiles.Profile) {
	const check = "testigo de numeración"
	path, err := app.WitnessPath(dataDir, p, name)
	if err != nil {
		d.line("WARN", check, "sin lugar para el testigo (%s): una copia vieja de la carpeta de datos puesta de vuelta no se detecta; "+
			"indique una carpeta fuera de la carpeta de datos con %s", describe(err), profiles.EnvWitnessDir)
		return
	}
	c, err := store.CheckWitness(path, app.WitnessKey(p, name), app.JournalPath(dataDir, p.Environment, name))
	switch {
	case err != nil:
		d.line("WARN", check, "%s no se puede leer (%v): al iniciar, el agente lo aparta y escribe uno nuevo", path, err)
	case !c.Found:
		d.line("WARN", check, "%s no existe todavía: el agente lo escribe al iniciar (primer inicio en este equipo, "+
			"o la carpeta de datos vino de otro equipo)", path)
	case c.Behind:
		d.line("FAIL", check, "%s: la carpeta de datos es una copia anterior a lo que este equipo numeró (el testigo registra %s; "+
			"generación %d, el diario de la carpeta de datos %d): el agente no numera esas series hasta que el servicio en línea responda "+
			"o un técnico confirme el último número usado con «cfe-agent cae used-elsewhere»", path, describeWitnessMarks(c.Marks),
			c.Generation, c.JournalGeneration)
	case c.Lagging:
		d.line("WARN", check, "%s no está al día (generación %d, el diario de numeración va por la %d): no se pudo escribir, o el agente "+
			"se ejecutó con otra carpeta de testigo (%s); registra %s", path, c.Generation, c.JournalGeneration,
			profiles.EnvWitnessDir, describeWitnessMarks(c.Marks))
	default:
		d.line("OK", check, "%s (escrito el %s): registra %s; la carpeta de datos está al día", path,
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
