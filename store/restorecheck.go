package store

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// Restore's checks of whose a backup is and of what the hosted service
// holds (docs/numbering.md "Backups and restore").

// errAgentRunning is Restore's error while an agent holds the store file.
func errAgentRunning(path string, err error) *cfe.Error {
	return &cfe.Error{Code: cfe.EUNAVAILABLE, Op: "store.Restore", Err: err,
		Message: "hay un agente ejecutándose con estos datos (" + path + "): deténgalo antes de restaurar"}
}

// checkFamily refuses a backup that is not this data directory's (lineage.go)
// unless o.AcceptForeign names it; it returns the data directory's family,
// whose files the restored one records as its ancestors.
func checkFamily(op string, info *BackupInfo, o RestoreOptions, res *RestoreResult) (family, error) {
	cur, err := readCurrentStore(o.Store)
	if err != nil {
		return family{}, err
	}
	jf, _ := readJournal(o.Journal) // a damaged journal: restoreSeries refuses the restore with its own message
	fam := familyOf(cur, jf)
	label := identityLabel(info.StoreID)
	if o.AcceptForeign != "" && o.AcceptForeign != label {
		return fam, &cfe.Error{Code: cfe.EINVALID, Op: op, Message: fmt.Sprintf(
			"--aceptar-copia-ajena %s no es la identidad de la copia %s, que es %s", o.AcceptForeign, info.Path, label)}
	}
	if fam.owns(info.StoreID) {
		return fam, nil
	}
	if o.AcceptForeign == label {
		res.Foreign = true
		return fam, nil
	}
	current := "ninguno que se pueda leer"
	if fam.current != "" {
		current = fam.current
	}
	var others []string
	for _, id := range fam.ids {
		if id != fam.current {
			others = append(others, id)
		}
	}
	known := "el archivo de datos actual es " + current
	if len(others) > 0 {
		known += "; antes tuvo (o su diario de numeración nombra) " + strings.Join(others, ", ")
	}
	return fam, &cfe.Error{Code: cfe.ECONFLICT, Op: op, Message: fmt.Sprintf(
		"la copia %s es del archivo de datos %s, que no es el de esta carpeta de datos ni uno de sus anteriores (%s): "+
			"restaurarla pondría los comprobantes de otra instalación en lugar de los de esta. No se cambió nada. "+
			"Si es lo que quiere (por ejemplo, la instalación de otra máquina pasa a esta), confirme con --aceptar-copia-ajena %s",
		info.Path, label, known, label)}
}

// serviceMismatch is a CFE of a backup that differs from the hosted
// service's under the same number.
type serviceMismatch struct {
	key        seqKey
	nro        int64
	ours, svc  string // uuids
	ourC, svcC string // security codes
}

// compareWithService compares the backup's CFEs with the hosted service's
// under the same numbers (docs): each must be the same document, the same
// uuid and security code (the first characters of its signature's digest).
// CFEs the service already refused for good are not compared. It returns
// how many were the same, or ECONFLICT naming those that differ.
func compareWithService(op string, info *BackupInfo, docs []ServiceCFE) (int, error) {
	var diff []serviceMismatch
	same := 0
	err := withBolt(info.Path, true, func(bdb *bolt.DB) error {
		return bdb.View(func(tx *bolt.Tx) error {
			byNumber, cfes := tx.Bucket(bucketByNumber), tx.Bucket(bucketCFEs)
			for _, d := range docs {
				k := seqKey{d.Type, d.Serie}
				uuid := byNumber.Get(numberKey(k, d.Nro))
				if uuid == nil {
					continue // the backup does not hold that number
				}
				var rec issuedRecord
				if err := json.Unmarshal(cfes.Get(uuid), &rec); err != nil {
					return fmt.Errorf("%w: cfe %s: %w", ErrDamaged, uuid, err)
				}
				if rec.Delivery.State == cfe.DeliveryRejected {
					continue
				}
				if rec.UUID == d.UUID && (d.CodSeguridad == "" || d.CodSeguridad == rec.CodSeguridad) {
					same++
					continue
				}
				diff = append(diff, serviceMismatch{key: k, nro: d.Nro, ours: rec.UUID, svc: d.UUID, ourC: rec.CodSeguridad, svcC: d.CodSeguridad})
			}
			return nil
		})
	})
	if err != nil {
		return 0, &cfe.Error{Code: cfe.EINVALID, Op: op, Err: err, Message: "no se pudo leer la copia " + info.Path}
	}
	if len(diff) == 0 {
		return same, nil
	}
	slices.SortFunc(diff, func(a, b serviceMismatch) int {
		return cmp.Or(cmp.Compare(a.key.Type, b.key.Type), cmp.Compare(a.key.Serie, b.key.Serie), cmp.Compare(a.nro, b.nro))
	})
	named := make([]string, 0, min(len(diff), maxNamedProblems))
	for _, m := range diff[:min(len(diff), maxNamedProblems)] {
		named = append(named, fmt.Sprintf("%s serie %s número %d: la copia tiene el uuid %s (código de seguridad %s), el servicio el uuid %s (código %s)",
			m.key.Type.Name(), m.key.Serie, m.nro, m.ours, m.ourC, m.svc, orNone(m.svcC)))
	}
	list := strings.Join(named, "; ")
	if len(diff) > maxNamedProblems {
		list += fmt.Sprintf("; y %d más", len(diff)-maxNamedProblems)
	}
	return same, &cfe.Error{Code: cfe.ECONFLICT, Op: op, Message: fmt.Sprintf(
		"la copia %s tiene %d comprobantes distintos de los que el servicio en línea guarda con los mismos números (%s): "+
			"restaurarla dejaría dos documentos distintos con un mismo número. No se cambió nada",
		info.Path, len(diff), list)}
}

func orNone(s string) string {
	if s == "" {
		return "ninguno"
	}
	return s
}
