package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/durable"
)

// holdRestoredReason is the Spanish reason of a hold set by Restore.
const holdRestoredReason = "se restauró una copia de seguridad sin diario de numeración y sin consultar al servicio en línea"

// AuditRestored is the audit kind of a store put back from a backup.
const AuditRestored = "restored"

// RestoreOptions say what Restore puts back where.
type RestoreOptions struct {
	Backup  string     // the backup file (from Backup)
	Store   string     // the store file it replaces (the agent must be stopped)
	Journal string     // the profile's numbering journal (Options.Journal)
	Meta    BackupMeta // the profile the backup must belong to
	// Records are the checks every record of the backup must pass
	// (VerifyBackup).
	Records RecordChecks
	// AcceptForeign is a technician's word that the backup, although it is
	// not of this data directory's store (nor of one of its ancestors), is
	// to be restored: the backup's identity, as the refusal names it
	// (--aceptar-copia-ajena). Empty: such a backup is refused.
	AcceptForeign string
	// Service, when set, is asked once the backup verified and is known to
	// belong here, before anything changes: the hosted service's last
	// numbers and the CFEs it holds under the backup's numbers. What it
	// could not learn is left unknown in its answer (the restore goes on
	// without it).
	Service func(ctx context.Context, info *BackupInfo) ServiceAnswer
	// HoldWithoutService makes the restored store hold numbering (as Hold)
	// when the journal is missing and no last numbers came from the
	// service (Hosted, Service): set it when the profile has a hosted
	// service that could say where numbering stands.
	HoldWithoutService bool
	// Hosted are the last numbers the hosted service holds, nil when it was
	// not asked or did not answer.
	Hosted []cfe.LastNumber
	// Confirmed are the technician's word on the numbers used since the
	// backup: for each (type, serie), the last number used.
	Confirmed []cfe.LastNumber
	// Hold makes the restored store hold numbering (as Open does with
	// Options.HoldWithoutJournal) until the hosted service or a technician
	// says where it stands: set it when the journal is missing and the
	// hosted service, which could tell, was not asked or did not answer.
	Hold bool
	// Now is the clock (dated name of the replaced file, audit); time.Now
	// when nil.
	Now func() time.Time

	// Witness and WitnessKey are the machine's numbering witness of the
	// profile (Options.Witness): one more bound of the numbers used since
	// the backup, and written with the journal. Empty: none.
	Witness    string
	WitnessKey WitnessKey
}

// RestoreSerie is where one (type, serie) stands against a backup.
type RestoreSerie struct {
	Type  cfe.Type
	Serie string
	// Backup is the backup's last number.
	Backup int64
	// Used is the highest number certainly used: the replaced store's
	// counter, the journal's committed mark, the hosted service's last.
	Used int64
	// Bound is where numbering must resume above: Used, or the journal's
	// reserved mark when the journal cannot tell exactly (after a crash).
	Bound int64
	// Source names what said Bound (Spanish).
	Source string
	// Resume is the counter the restored store got: numbering continues at
	// Resume+1.
	Resume int64
}

// ServiceAnswer is what the hosted service said about a backup (Service).
type ServiceAnswer struct {
	// Last are the last numbers the service holds in the backup's ranges;
	// LastKnown says whether it answered them.
	Last      []cfe.LastNumber
	LastKnown bool
	// CFEs are the CFEs the service holds in the backup's ranges (at least
	// those under the backup's numbers); CFEsKnown says whether it
	// answered them.
	CFEs      []ServiceCFE
	CFEsKnown bool
}

// ServiceCFE is a CFE the hosted service holds, as its search lists it.
type ServiceCFE struct {
	Type         cfe.Type
	Serie        string
	Nro          int64
	UUID         string
	CodSeguridad string // the first six characters of its signature's DigestValue; "" when the service does not say
}

// RestoreResult is what Restore did.
type RestoreResult struct {
	Info     *BackupInfo
	Replaced string // the replaced store, kept under a dated name; "" when there was none
	// Behind lists the series the backup was behind on (each raised to its
	// Resume), and the confirmed ones.
	Behind []RestoreSerie
	// Foreign: the backup was not this data directory's, and the technician
	// accepted it (AcceptForeign).
	Foreign bool
	// Lineage are the identities the restored file records as its
	// ancestors.
	Lineage []string
	// Compared counts the backup's CFEs found identical (uuid and security
	// code) to the hosted service's under the same numbers; ServiceCompared
	// says whether the comparison ran (the service answered).
	Compared        int
	ServiceCompared bool
	// Held: the restored store holds numbering until the hosted service or
	// a technician says where it stands.
	Held bool
}

// Restore puts the backup at o.Backup in place of the store file at o.Store,
// with the numbering checks of Open (docs/numbering.md "Backups and
// restore"):
//
//   - the backup must verify, every record with o.Records (VerifyBackup),
//     and belong to o.Meta's profile, environment and company;
//   - it must be a backup of this data directory's store: of the current
//     file, of one of the files it replaced (its lineage), or of the one
//     the journal names; or the data directory must have nothing of its own
//     (no store and no journal, or a store that holds no CFE, live or
//     archived, and knows no other file). Another is refused (ECONFLICT)
//     unless o.AcceptForeign names it; the restored file records the
//     replaced one in its lineage;
//   - when the hosted service answers (o.Service), each CFE of the backup
//     that the service holds under the same number must be the same
//     document (uuid and security code); one that differs is refused
//     (ECONFLICT, naming the numbers). CFEs the service already refused
//     (the rejected list) are not compared: the service's copy stands;
//   - for every (type, serie), the numbers used since the backup are bounded
//     by the store it replaces (its counters), the numbering journal (Open's
//     rule: exact after a clean stop, the reserved mark after a crash) and
//     the hosted service (o.Hosted). A backup below that bound is refused
//     (ECONFLICT, naming each serie and the flag to confirm it) unless
//     o.Confirmed names that serie's last used number, which must not be
//     below what is certainly used; numbering then continues above both the
//     bound and the confirmed number, so no number is signed twice;
//   - the replaced store is kept beside it under a dated name
//     (<store>.reemplazado-AAAAMMDDTHHMMSS), never deleted.
//
// The backup is copied to a temporary file beside the store, its counters
// raised (and the journal with them) and only then renamed into place: a
// crash leaves the old store or the restored one, never a mix, and never a
// journal below what was used.
//
// Errors: EUNAVAILABLE when an agent holds the store; EINVALID for a file
// that is not a verified backup of this profile (a damaged record named) or
// a confirmation below what was used; ECONFLICT for a backup of another
// data directory not accepted, one whose CFEs differ from the hosted
// service's, or one behind without confirmation.
func Restore(ctx context.Context, o RestoreOptions) (*RestoreResult, error) {
	const op = "store.Restore"
	if o.Now == nil {
		o.Now = time.Now
	}
	info, err := verifyBackupFile(ctx, o.Backup, o.Records)
	if err != nil {
		return nil, err
	}
	if err := checkMeta(op, info, o.Meta); err != nil {
		return nil, err
	}
	res := &RestoreResult{Info: info}
	fam, err := checkFamily(op, info, o, res)
	if err != nil {
		return nil, err
	}
	serviceKnown := o.Hosted != nil
	if o.Service != nil {
		ans := o.Service(ctx, info)
		if ans.LastKnown {
			o.Hosted, serviceKnown = append(slices.Clone(o.Hosted), ans.Last...), true
		}
		if ans.CFEsKnown {
			res.ServiceCompared = true
			if res.Compared, err = compareWithService(op, info, ans.CFEs); err != nil {
				return nil, err
			}
		}
	}
	if o.HoldWithoutService && !serviceKnown {
		if _, err := os.Stat(o.Journal); errors.Is(err, fs.ErrNotExist) {
			o.Hold = true
		}
	}
	res.Held = o.Hold
	series, err := restoreSeries(op, info, o)
	if err != nil {
		return nil, err
	}
	var lasts []cfe.LastNumber
	var refused []string
	for i, s := range series {
		c, confirmed := confirmedFor(o.Confirmed, s.Type, s.Serie)
		switch {
		case confirmed && c < max(s.Used, s.Backup):
			return nil, &cfe.Error{Code: cfe.EINVALID, Op: op, Message: fmt.Sprintf(
				"%s serie %s: se confirmó el número %d, pero ya se usaron hasta el %d (%s); confirme el último número realmente usado",
				s.Type.Name(), s.Serie, c, max(s.Used, s.Backup), s.Source)}
		case confirmed:
			series[i].Resume = max(s.Bound, c)
		case s.Backup < s.Bound:
			refused = append(refused, fmt.Sprintf("%s serie %s: la copia llega al %d y se usaron hasta el %d (%s): confirme con --confirmar-numeros-usados %d:%s:%d",
				s.Type.Name(), s.Serie, s.Backup, s.Bound, s.Source, int(s.Type), s.Serie, s.Bound))
			continue
		default:
			continue
		}
		lasts = append(lasts, cfe.LastNumber{Type: s.Type, Serie: s.Serie, Last: series[i].Resume})
	}
	for _, c := range o.Confirmed {
		if !slices.ContainsFunc(series, func(s RestoreSerie) bool { return s.Type == c.Type && s.Serie == c.Serie }) {
			return nil, &cfe.Error{Code: cfe.EINVALID, Op: op, Message: fmt.Sprintf(
				"se confirmó %d:%s, pero ni la copia ni el diario de numeración tienen esa serie", int(c.Type), c.Serie)}
		}
	}
	if len(refused) > 0 {
		return nil, &cfe.Error{Code: cfe.ECONFLICT, Op: op, Message: "la copia de seguridad está atrás de la numeración ya usada; " +
			"restaurarla tal cual volvería a firmar números ya usados. " + strings.Join(refused, "; ")}
	}
	for _, s := range series {
		if s.Resume > s.Backup {
			res.Behind = append(res.Behind, s)
		}
	}
	now := o.Now()
	if _, err := os.Stat(o.Store); err == nil {
		res.Replaced = o.Store + ".reemplazado-" + now.Format("20060102T150405")
	}
	err = durable.WriteFileFunc(o.Store, func(f *os.File) error {
		src, err := os.Open(o.Backup)
		if err != nil {
			return err
		}
		defer src.Close()
		_, err = io.Copy(f, src)
		return err
	}, func(tmp string) error {
		if err := unsealBackup(tmp, info, res, fam, now); err != nil {
			return err
		}
		db, err := Open(tmp, Options{Journal: o.Journal, Witness: o.Witness, WitnessKey: o.WitnessKey, Now: o.Now, restoring: true})
		if err != nil {
			return err
		}
		err = db.ResumeNumbering(ctx, "the restore of backup "+o.Backup, lasts)
		if err == nil {
			err = db.annulSkipped(ctx, "store.Restore", restoreSkipped(series, o, now))
		}
		if err == nil && o.Hold && db.hold == nil {
			err = db.putHold(holdRecord{Since: now, Reason: holdRestoredReason}, AuditEvent{At: now, Kind: AuditNumberingHeld,
				Detail: "restored without a numbering journal and without the hosted service's last numbers: signing held until they are known"})
		}
		if cerr := db.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
		if res.Replaced != "" {
			if err := os.Rename(o.Store, res.Replaced); err != nil {
				return err
			}
			// Its commit log goes with it (wal.go) when it holds records
			// (a crash before the restore): opened under its new name, the
			// replaced file still finds what was logged. An empty one (a
			// clean stop) goes.
			from, to := WALPaths(o.Store), WALPaths(res.Replaced)
			for i := range from {
				if err := moveLog(from[i], to[i]); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		var ce *cfe.Error
		if errors.As(err, &ce) {
			return nil, err
		}
		return nil, &cfe.Error{Code: cfe.EINTERNAL, Op: op, Err: err, Message: "no se pudo restaurar la copia " + o.Backup}
	}
	return res, nil
}

// checkMeta refuses a backup of another profile, environment or company.
func checkMeta(op string, info *BackupInfo, want BackupMeta) error {
	var fs []cfe.FieldError
	got := info.Meta
	if want.RUC != "" && got.RUC != want.RUC {
		fs = append(fs, field("ruc", "la copia es de la empresa con RUC %s, el perfil es de %s", got.RUC, want.RUC))
	}
	if want.Environment != "" && got.Environment != want.Environment {
		fs = append(fs, field("ambiente", "la copia es del ambiente %s, el perfil es de %s", got.Environment, want.Environment))
	}
	if want.Profile != "" && !strings.EqualFold(got.Profile, want.Profile) {
		fs = append(fs, field("perfil", "la copia es del perfil %s, no de %s", got.Profile, want.Profile))
	}
	if len(fs) == 0 {
		return nil
	}
	e := invalid(op, fs...)
	e.Message = "la copia " + info.Path + " no es de este perfil: " + joinFields(fs)
	return e
}

func joinFields(fs []cfe.FieldError) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = f.Mensaje
	}
	return strings.Join(parts, "; ")
}

// confirmedFor returns the technician's confirmation of (t, serie).
func confirmedFor(cs []cfe.LastNumber, t cfe.Type, serie string) (int64, bool) {
	for _, c := range cs {
		if c.Type == t && c.Serie == serie {
			return c.Last, true
		}
	}
	return 0, false
}

// restoreSeries reads the marks of every (type, serie) the backup, the store
// it replaces, the journal or the hosted service know.
func restoreSeries(op string, info *BackupInfo, o RestoreOptions) ([]RestoreSerie, error) {
	cur, curID, err := currentCounters(o.Store)
	if err != nil {
		return nil, err
	}
	jf, err := readJournal(o.Journal)
	if err != nil {
		return nil, &cfe.Error{Code: cfe.EINTERNAL, Op: op, Err: err,
			Message: fmt.Sprintf("el diario de numeración %s está dañado; no se puede saber por qué número sigue la numeración", o.Journal)}
	}
	by := map[seqKey]*RestoreSerie{}
	get := func(t cfe.Type, serie string) *RestoreSerie {
		k := seqKey{t, serie}
		if by[k] == nil {
			by[k] = &RestoreSerie{Type: t, Serie: serie}
		}
		return by[k]
	}
	raise := func(s *RestoreSerie, used, bound int64, source string) {
		s.Used = max(s.Used, used)
		if bound > s.Bound {
			s.Bound, s.Source = bound, source
		}
	}
	for _, c := range info.Counters {
		get(c.Type, c.Serie).Backup = c.Last
	}
	for k, last := range cur {
		raise(get(k.Type, k.Serie), last, last, "el archivo de datos que se reemplaza")
	}
	if jf != nil {
		replaced := curID == "" || jf.StoreID != curID
		for _, e := range jf.Sequences {
			s := get(e.Type, e.Serie)
			last := cur[seqKey{e.Type, e.Serie}]
			bound := last
			if floor, behind := jf.floorFor(e, replaced, last); behind {
				bound = floor
			}
			source := "diario de numeración"
			if !jf.Clean && bound > e.Committed {
				source = "diario de numeración, tras una detención no ordenada: puede haberse usado hasta su reserva"
			}
			raise(s, e.Committed, bound, source)
		}
	} else if len(cur) == 0 {
		// Neither the journal nor the store is left (a new disk): the
		// journal's marks saved in the backup bound what the lost store may
		// have committed in the block it was in, as a lost journal's reserved
		// mark would (Open's rule after a crash).
		for _, e := range info.Journal {
			raise(get(e.Type, e.Serie), 0, e.Last, "diario de numeración guardado en la copia: el archivo perdido pudo usar hasta su reserva")
		}
	}
	if o.Witness != "" {
		// The machine's witness, with Open's rule for the journal: it bounds
		// what was used even when the data directory is an older copy. One
		// that cannot be read is passed over here (Open sets it aside).
		if w, err := readWitness(o.Witness, o.WitnessKey); err == nil && w != nil {
			replaced := curID == "" || w.StoreID != curID
			for _, e := range w.Sequences {
				last, floor := cur[seqKey{e.Type, e.Serie}], witnessFloor(e)
				bound := last
				if replaced && floor > last || !replaced && last < e.Committed {
					bound = floor
				}
				raise(get(e.Type, e.Serie), e.Committed, bound, "testigo de numeración de este equipo")
			}
		}
	}
	for _, h := range o.Hosted {
		raise(get(h.Type, h.Serie), h.Last, h.Last, "servicio en línea")
	}
	out := make([]RestoreSerie, 0, len(by))
	for _, s := range by {
		s.Resume = max(s.Backup, s.Bound)
		out = append(out, *s)
	}
	slices.SortFunc(out, func(a, b RestoreSerie) int { return cmp.Or(cmp.Compare(a.Type, b.Type), cmp.Compare(a.Serie, b.Serie)) })
	return out, nil
}

// currentCounters reads the counters and identity of the store a restore
// replaces. A missing or empty file has none; a damaged one is passed over
// (the journal and the hosted service still bound its numbers); one an
// agent holds is refused.
func currentCounters(path string) (map[seqKey]int64, string, error) {
	out := map[seqKey]int64{}
	if fi, err := os.Stat(path); err != nil || fi.Size() == 0 {
		return out, "", nil
	}
	if err := checkFileSize(path); err != nil {
		return out, "", nil
	}
	if err := checkLocked(path, time.Second); err != nil {
		var ce *cfe.Error
		if errors.As(err, &ce) && ce.Code == cfe.EUNAVAILABLE {
			return nil, "", &cfe.Error{Code: cfe.EUNAVAILABLE, Op: "store.Restore", Err: err,
				Message: "hay un agente ejecutándose con estos datos (" + path + "): deténgalo antes de restaurar"}
		}
		return out, "", nil
	}
	var id string
	err := withBolt(path, true, func(bdb *bolt.DB) error {
		return bdb.View(func(tx *bolt.Tx) error {
			rec, err := snapshotOf(tx)
			if err != nil {
				return err
			}
			id = rec.StoreID
			for _, c := range rec.Counters {
				out[seqKey{c.Type, c.Serie}] = c.Last
			}
			// What the commit log acknowledged and the file does not hold
			// yet (a crash before its checkpoint) counts as used too.
			var logID [walIDLen]byte
			copy(logID[:], tx.Bucket(bucketMeta).Get(keyWALID))
			for k, n := range loggedNumbers(path, logID, walApplied(tx)) {
				out[k] = max(out[k], n)
			}
			return nil
		})
	})
	if err != nil {
		return map[seqKey]int64{}, "", nil
	}
	return out, id, nil
}

// unsealBackup turns the copy at path into a live store: the backup record
// goes, the files of the data directory it replaces join its lineage
// (fam), an audit event says where the file came from.
func unsealBackup(path string, info *BackupInfo, res *RestoreResult, fam family, now time.Time) error {
	return withBolt(path, false, func(bdb *bolt.DB) error {
		return bdb.Update(func(tx *bolt.Tx) error {
			if err := tx.DeleteBucket(bucketBackup); err != nil {
				return err
			}
			how := "replaced by the restore of a backup of store " + identityLabel(info.StoreID)
			if res.Foreign {
				how += ", another data directory's, accepted by a technician"
			}
			if _, err := addAncestors(tx, info.StoreID, fam.ids, how, now); err != nil {
				return err
			}
			lin, err := readLineage(tx)
			if err != nil {
				return err
			}
			res.Lineage = lineageIDs(lin)
			detail := fmt.Sprintf("store restored from backup %s (taken %s, transaction %d of store %s)",
				info.Path, info.TakenAt.Format(time.RFC3339), info.TxID, identityLabel(info.StoreID))
			if res.Foreign {
				detail += "; not a backup of this data directory's store (" + strings.Join(fam.ids, ", ") +
					"): accepted by a technician"
			}
			if res.Replaced != "" {
				detail += "; the replaced file is kept as " + res.Replaced
			}
			if res.ServiceCompared {
				detail += fmt.Sprintf("; %d CFEs compared with the hosted service's, all the same", res.Compared)
			}
			return appendAudit(tx, AuditEvent{At: now, Kind: AuditRestored, Detail: detail})
		})
	})
}

// restoreSkipped returns, per serie a restore resumes above what was
// certainly used (the highest of the replaced store's counter, the
// journal's committed mark, the hosted service's last, the backup's last
// and the technician's confirmed number), the numbers in between: never
// signed, annulled for the daily report (AnnulRestoreBound).
func restoreSkipped(series []RestoreSerie, o RestoreOptions, now time.Time) []cfe.AnnulledRange {
	var out []cfe.AnnulledRange
	for _, s := range series {
		certain := max(s.Used, s.Backup)
		if c, ok := confirmedFor(o.Confirmed, s.Type, s.Serie); ok {
			certain = max(certain, c)
		}
		if s.Resume > certain {
			out = append(out, cfe.AnnulledRange{Type: s.Type, Serie: s.Serie, From: certain + 1, To: s.Resume,
				Reason: cfe.AnnulRestoreBound, At: now, Note: fmt.Sprintf("restauración de %s: %s", o.Backup, s.Source)})
		}
	}
	return out
}
