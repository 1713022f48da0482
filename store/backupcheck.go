package store

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// Every record of a backup checked (docs/numbering.md "Backups and
// restore").
//
// A backup is checked record by record before it takes its name (Backup),
// before it is restored (Restore), and whenever VerifyBackup is asked:
//
//   - each stored CFE: its record decodes; its signed XML is there,
//     decompresses and matches the CRC-32C stored with it (xmlcodec.go; a
//     value stored as it is, by schema 2, has none: it is counted, and its
//     signature still checks it); the XML is a CFE of the record's type,
//     serie and number; its XML-DSig verifies with the certificate its
//     KeyInfo carries, and the record's security code is the one of that
//     signature (RecordChecks.Signature);
//   - the numbering records agree with the CFEs: each CFE is in the number
//     index under its own number and in the time index, and nothing else is
//     (so each number of each serie is stored once); its number lies in the
//     CAE range it names, of its type and serie, and not above its serie's
//     counter (a counter below a stored number would sign that number
//     again); a CFE pending delivery is in the outbox under its commit
//     sequence, a refused one in the rejected list, a delivered one in
//     neither, and both lists name only such CFEs.
//
// Yearly archives (archive.go) get the CFE checks and the index checks:
// they hold no counters, ranges or outbox.
//
// The XML checks cost most (parsing and verifying a signature is about a
// millisecond per CFE): they run on RecordChecks.Workers goroutines while the
// transaction's goroutine reads the next records.

// RecordChecks say how the records of a backup are checked beyond what the
// store reads itself.
type RecordChecks struct {
	// Signature verifies the XML-DSig of a stored CFE's signed XML with the
	// certificate its KeyInfo carries, and returns the signature's
	// DigestValue (base64). The store does not verify signatures itself (it
	// does not import the signer): the agent passes the signer's. Nil
	// leaves signatures unchecked; every other check still runs.
	Signature func(signedXML []byte) (digestValue string, err error)
	// Workers bounds the goroutines that parse and verify signed XML;
	// 0 means runtime.GOMAXPROCS(0).
	Workers int
}

// RecordsChecked says what a check of a backup's records covered.
type RecordsChecked struct {
	CFEs       int // stored CFEs checked
	Signatures int // of them, with their signature verified
	// WithoutChecksum counts signed XML stored without a CRC-32C (as
	// schema 2 stored it): only its signature and its record check it.
	WithoutChecksum int
	// Lowest is the lowest number stored of each (type, serie), in no
	// particular order.
	Lowest []cfe.LastNumber
}

// ErrDamagedRecord is wrapped by the error of a backup or an archive copy
// with a record that fails its checks (errors.Is).
var ErrDamagedRecord = errors.New("damaged record")

// recordProblem is one record that failed its checks.
type recordProblem struct {
	sort string // orders the problems: the number key, or the uuid
	who  string // Spanish: the CFE or the entry
	what string // Spanish: what is wrong
}

// recordsError lists the records of a file that failed their checks.
type recordsError struct {
	problems []recordProblem
}

// maxNamedProblems is how many damaged records a message names.
const maxNamedProblems = 10

func (e *recordsError) Error() string { return e.describe() }

func (e *recordsError) Unwrap() error { return ErrDamagedRecord }

// describe names the damaged records (Spanish), the first few of them.
func (e *recordsError) describe() string {
	n := len(e.problems)
	var b strings.Builder
	if n == 1 {
		b.WriteString("1 registro dañado: ")
	} else {
		fmt.Fprintf(&b, "%d registros dañados: ", n)
	}
	for i, p := range e.problems[:min(n, maxNamedProblems)] {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(p.who + ": " + p.what)
	}
	if n > maxNamedProblems {
		fmt.Fprintf(&b, "; y %d más", n-maxNamedProblems)
	}
	return b.String()
}

// cfeName names a stored CFE in messages (Spanish).
func cfeName(t cfe.Type, serie string, nro int64, uuid string) string {
	return fmt.Sprintf("%s serie %s número %d (uuid %s)", t.Name(), serie, nro, uuid)
}

// xmlJob is one signed XML for the workers to check against its record.
type xmlJob struct {
	sort, who string
	key       seqKey
	nro       int64
	codSeg    string
	xml       []byte
}

// recordChecker checks the records of one transaction.
type recordChecker struct {
	tx     *bolt.Tx
	checks RecordChecks
	live   bool // a store or its backup: counters, ranges, outbox; false: an archive

	ranges   map[string]cfe.CAERange
	counters map[seqKey]int64
	lowest   map[seqKey]int64

	mu       sync.Mutex
	problems []recordProblem
	done     RecordsChecked
}

func (c *recordChecker) fail(sort, who, format string, args ...any) {
	c.mu.Lock()
	c.problems = append(c.problems, recordProblem{sort: sort, who: who, what: fmt.Sprintf(format, args...)})
	c.mu.Unlock()
}

// checkRecords checks every record of tx (see above); live says whether tx
// is a store's (or its backup's) or an archive's. It returns the records
// that failed as a *recordsError, and what it covered.
func checkRecords(ctx context.Context, tx *bolt.Tx, checks RecordChecks, live bool) (RecordsChecked, error) {
	c := &recordChecker{tx: tx, checks: checks, live: live, lowest: map[seqKey]int64{}}
	for _, name := range [][]byte{bucketMeta, bucketCFEs, bucketXML, bucketByNumber, bucketByTime} {
		if tx.Bucket(name) == nil {
			return c.done, fmt.Errorf("le falta la sección %s", name)
		}
	}
	if live {
		if err := c.loadNumbering(); err != nil {
			return c.done, err
		}
	}
	workers := checks.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	jobs := make(chan xmlJob, 4*workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for j := range jobs {
				c.checkXML(j)
			}
		})
	}
	err := func() error {
		defer func() { close(jobs); wg.Wait() }() // also when bbolt panics on a damaged page (guard)
		return c.walkCFEs(ctx, jobs)
	}()
	if err != nil {
		return c.done, err
	}
	for k, n := range c.lowest {
		c.done.Lowest = append(c.done.Lowest, cfe.LastNumber{Type: k.Type, Serie: k.Serie, Last: n})
	}
	if len(c.problems) > 0 {
		slices.SortFunc(c.problems, func(a, b recordProblem) int { return cmp.Compare(a.sort, b.sort) })
		return c.done, &recordsError{problems: c.problems}
	}
	return c.done, nil
}

// loadNumbering reads the ranges and the counters.
func (c *recordChecker) loadNumbering() error {
	for _, name := range [][]byte{bucketRanges, bucketCounters, bucketOutbox, bucketRejected} {
		if c.tx.Bucket(name) == nil {
			return fmt.Errorf("le falta la sección %s", name)
		}
	}
	c.ranges = map[string]cfe.CAERange{}
	err := c.tx.Bucket(bucketRanges).ForEach(func(k, v []byte) error {
		var r rangeRecord
		if err := json.Unmarshal(v, &r); err != nil {
			c.fail("0 "+string(k), "el rango CAE "+string(k), "no se puede leer (%v)", err)
			return nil
		}
		c.ranges[r.ID] = r.domain()
		return nil
	})
	if err != nil {
		return err
	}
	c.counters = map[seqKey]int64{}
	return c.tx.Bucket(bucketCounters).ForEach(func(k, v []byte) error {
		var r counterRecord
		if err := json.Unmarshal(v, &r); err != nil || string(counterKey(seqKey{r.Type, r.Serie})) != string(k) {
			c.fail("0 "+string(k), "el contador de numeración "+string(k), "no se puede leer")
			return nil
		}
		c.counters[seqKey{r.Type, r.Serie}] = r.Last
		return nil
	})
}

// walkCFEs reads every CFE record, checks what the transaction holds about
// it, and hands its signed XML to the workers; then it checks that the
// indexes and lists hold nothing else.
func (c *recordChecker) walkCFEs(ctx context.Context, jobs chan<- xmlJob) error {
	tx := c.tx
	byNumber, byTime, xmls := tx.Bucket(bucketByNumber), tx.Bucket(bucketByTime), tx.Bucket(bucketXML)
	var outbox, rejected, held *bolt.Bucket
	if c.live {
		outbox, rejected = tx.Bucket(bucketOutbox), tx.Bucket(bucketRejected)
		held = tx.Bucket(bucketQuarantine) // nil in a backup of a store older than the quarantine
	}
	var pending, refused int
	cur := tx.Bucket(bucketCFEs).Cursor()
	for k, v := cur.First(); k != nil; k, v = cur.Next() {
		c.done.CFEs++
		if c.done.CFEs%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		var rec issuedRecord
		if err := json.Unmarshal(v, &rec); err != nil {
			c.fail("~"+string(k), "el comprobante con uuid "+string(k), "su registro no se puede leer (%v)", err)
			continue
		}
		key := rec.key()
		nk := numberKey(key, rec.Nro)
		sort, who := string(nk)+" "+rec.UUID, cfeName(rec.Type, rec.Serie, rec.Nro, rec.UUID)
		if rec.UUID != string(k) {
			c.fail(sort, who, "está guardado bajo el uuid %s", k)
		}
		if !rec.Type.Valid() || rec.Serie == "" || rec.Nro <= 0 {
			c.fail(sort, who, "su registro no tiene un tipo, una serie y un número válidos")
			continue
		}
		if low, ok := c.lowest[key]; !ok || rec.Nro < low {
			c.lowest[key] = rec.Nro
		}
		if got := byNumber.Get(nk); !bytes.Equal(got, k) && (rec.CorrectedBy == "" || got == nil) {
			// A contingency receipt sent again corrected leaves its number
			// to its correction (keyed.go).
			c.fail(sort, who, "el índice por número no lo nombra (nombra %q)", got)
		}
		if got := byTime.Get(timeKey(rec.TmstFirma, key, rec.Nro)); !bytes.Equal(got, k) {
			c.fail(sort, who, "el índice por fecha de firma no lo nombra")
		}
		if c.live {
			c.checkNumbering(sort, who, &rec)
			switch c.checkDelivery(sort, who, &rec, outbox, rejected, held) {
			case cfe.DeliveryPending:
				pending++
			case cfe.DeliveryRejected:
				refused++
			}
		}
		stored := xmls.Get(seqBytes(rec.OutboxSeq))
		if stored == nil {
			c.fail(sort, who, "falta su XML firmado")
			continue
		}
		if len(stored) == 0 || stored[0] != xmlCompressed {
			c.done.WithoutChecksum++
		}
		xml, err := decodeXML(tx, stored)
		if err != nil {
			what := "su XML firmado no se puede descomprimir"
			if errors.Is(err, errXMLChecksum) {
				what = "su XML firmado no coincide con su suma de verificación (CRC-32C)"
			}
			c.fail(sort, who, "%s (%v)", what, err)
			continue
		}
		select {
		case jobs <- xmlJob{sort: sort, who: who, key: key, nro: rec.Nro, codSeg: rec.CodSeguridad, xml: xml}:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	// Each CFE found its own entries above, under distinct keys: the
	// indexes and lists hold nothing else when their sizes are those
	// counts. Otherwise the extra entries are named.
	if n := bucketLen(byNumber); n != c.done.CFEs {
		c.strayIndex(byNumber, "el índice por número", func(k []byte) []byte { return k })
	}
	if n := bucketLen(byTime); n != c.done.CFEs {
		c.strayIndex(byTime, "el índice por fecha de firma", func(k []byte) []byte {
			_, nk, _ := bytes.Cut(k, []byte("|"))
			return nk
		})
	}
	if c.live {
		if bucketLen(outbox) != pending {
			c.strayList(outbox, "la cola de envíos", cfe.DeliveryPending)
		}
		if bucketLen(rejected) != refused {
			c.strayList(rejected, "la lista de rechazados", cfe.DeliveryRejected)
		}
	}
	return nil
}

// checkNumbering checks rec against its range and its serie's counter.
func (c *recordChecker) checkNumbering(sort, who string, rec *issuedRecord) {
	r, ok := c.ranges[rec.RangeID]
	switch {
	case !ok:
		c.fail(sort, who, "nombra el rango CAE %s, que no está", rec.RangeID)
	case r.Type != rec.Type || r.Serie != rec.Serie || rec.Nro < r.DNro || rec.Nro > r.HNro:
		c.fail(sort, who, "no está en el rango CAE que nombra (%s serie %s, %d a %d)", r.Type.Name(), r.Serie, r.DNro, r.HNro)
	}
	if info, _ := rec.Type.Info(); info.Contingency {
		return // a keyed-in paper form's number: no counter (keyed.go)
	}
	if last := c.counters[rec.key()]; last < rec.Nro {
		c.fail(sort, who, "el contador de su serie está en %d, por debajo de su número: se volvería a firmar", last)
	}
}

// checkDelivery checks that rec is in the list its delivery state says, and
// returns that state ("" for a pending CFE held in quarantine, which the
// outbox does not count).
func (c *recordChecker) checkDelivery(sort, who string, rec *issuedRecord, outbox, rejected, held *bolt.Bucket) string {
	seq := seqBytes(rec.OutboxSeq)
	in := func(b *bolt.Bucket) bool {
		if b == nil {
			return false
		}
		var e outboxEntry
		v := b.Get(seq)
		return v != nil && json.Unmarshal(v, &e) == nil && e.UUID == rec.UUID
	}
	inOutbox, inRejected := in(outbox), in(rejected)
	switch state := rec.Delivery.State; state {
	case cfe.DeliveryPending:
		if !inOutbox && in(held) {
			// Its record or XML could not be read when the outbox met it
			// (quarantine.go): the copy would carry the damage. The older
			// backups stay (rotation needs a good one), and recovery takes
			// the CFE from one of them.
			c.fail(sort, who, "está dañado y en cuarentena: recupérelo con «cfe-agent recuperar %s» antes de la copia", rec.UUID)
			return ""
		}
		if !inOutbox {
			c.fail(sort, who, "está pendiente de envío pero no está en la cola de envíos: no se enviaría nunca")
		}
	case cfe.DeliveryRejected:
		if !inRejected {
			c.fail(sort, who, "fue rechazado pero no está en la lista de rechazados")
		}
	case cfe.DeliveryAccepted:
		if inOutbox || inRejected {
			c.fail(sort, who, "fue aceptado por el servicio pero sigue en la cola de envíos o en la de rechazados")
		}
	default:
		c.fail(sort, who, "su estado de envío %q no es uno conocido", state)
	}
	if inOutbox && inRejected {
		c.fail(sort, who, "está a la vez en la cola de envíos y en la lista de rechazados")
	}
	return rec.Delivery.State
}

// strayIndex names the entries of an index (by_number, by_time) that do not
// name a stored CFE under that CFE's own key (number of the entry's key).
func (c *recordChecker) strayIndex(b *bolt.Bucket, name string, numberPart func(k []byte) []byte) {
	cfes := c.tx.Bucket(bucketCFEs)
	_ = b.ForEach(func(k, v []byte) error {
		nk := numberPart(k)
		var rec issuedRecord
		data := cfes.Get(v)
		if data != nil && json.Unmarshal(data, &rec) == nil && bytes.Equal(numberKey(rec.key(), rec.Nro), nk) {
			return nil
		}
		c.fail(string(nk)+" ", name+" en "+numberKeyName(nk), "nombra el uuid %s, que no es un comprobante guardado con ese número", v)
		return nil
	})
}

// strayList names the entries of the outbox or the rejected list that do
// not name a stored CFE in state under the entry's commit sequence.
func (c *recordChecker) strayList(b *bolt.Bucket, name, state string) {
	cfes := c.tx.Bucket(bucketCFEs)
	_ = b.ForEach(func(k, v []byte) error {
		var e outboxEntry
		var rec issuedRecord
		if json.Unmarshal(v, &e) == nil {
			if data := cfes.Get([]byte(e.UUID)); data != nil && json.Unmarshal(data, &rec) == nil &&
				len(k) == 8 && rec.OutboxSeq == seqOf(k) && rec.Delivery.State == state {
				return nil
			}
		}
		who := name
		if rec.UUID != "" {
			who = name + " (" + cfeName(rec.Type, rec.Serie, rec.Nro, rec.UUID) + ")"
		}
		c.fail("~~"+string(k), who, "la entrada %x nombra el uuid %q, que no es un comprobante %s con esa secuencia", k, e.UUID, state)
		return nil
	})
}

// checkXML checks one signed XML against its record: a CFE of the record's
// type, serie and number, whose signature verifies and gives the record's
// security code.
func (c *recordChecker) checkXML(j xmlJob) {
	defer func() {
		if r := recover(); r != nil {
			c.fail(j.sort, j.who, "su XML firmado no se pudo verificar (%v)", r)
		}
	}()
	t, serie, nro, err := readIdDoc(j.xml)
	if err != nil {
		c.fail(j.sort, j.who, "su XML firmado no es un CFE legible: %v", err)
		return
	}
	if t != j.key.Type || serie != j.key.Serie || nro != j.nro {
		c.fail(j.sort, j.who, "su XML firmado es el de %s serie %s número %d", t.Name(), serie, nro)
		return
	}
	if c.checks.Signature == nil {
		return
	}
	digest, err := c.checks.Signature(j.xml)
	if err != nil {
		c.fail(j.sort, j.who, "su firma XML-DSig no verifica: %s", cfe.ErrorMessage(err))
		return
	}
	if code := cfe.SecurityCode(digest); code != j.codSeg {
		c.fail(j.sort, j.who, "su registro tiene el código de seguridad %s y su firma da %s", j.codSeg, code)
		return
	}
	c.mu.Lock()
	c.done.Signatures++
	c.mu.Unlock()
}

// readIdDoc reads the type, serie and number of a signed CFE from its
// Encabezado/IdDoc, reading the XML only up to there (they come first: a
// whole parse is the signature check's). The root must be a CFE of DGI's
// namespace.
func readIdDoc(b []byte) (t cfe.Type, serie string, nro int64, err error) {
	d := xml.NewDecoder(bytes.NewReader(b))
	var path []string // local names below the root
	var text map[string]string
	for {
		tok, err := d.Token()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = errors.New("no tiene Encabezado/IdDoc")
			}
			return 0, "", 0, err
		}
		switch e := tok.(type) {
		case xml.StartElement:
			if path == nil {
				if e.Name.Space != cfe.NamespaceCFE || e.Name.Local != "CFE" {
					return 0, "", 0, fmt.Errorf("el elemento raíz es <%s>, no el CFE de DGI", e.Name.Local)
				}
				path = []string{}
				continue
			}
			path = append(path, e.Name.Local)
			if len(path) == 3 && path[1] == "Encabezado" && path[2] == "IdDoc" {
				text = map[string]string{}
			}
		case xml.CharData:
			if text != nil && len(path) == 4 {
				text[path[3]] += string(e)
			}
		case xml.EndElement:
			if text != nil && len(path) == 3 { // the end of IdDoc
				n, nerr := strconv.Atoi(strings.TrimSpace(text["TipoCFE"]))
				nro, rerr := strconv.ParseInt(strings.TrimSpace(text["Nro"]), 10, 64)
				if nerr != nil || rerr != nil {
					return 0, "", 0, errors.New("su IdDoc no tiene TipoCFE y Nro numéricos")
				}
				return cfe.Type(n), strings.TrimSpace(text["Serie"]), nro, nil
			}
			if len(path) > 0 {
				path = path[:len(path)-1]
			}
		}
	}
}

// bucketLen counts the keys of b.
func bucketLen(b *bolt.Bucket) int {
	n := 0
	cur := b.Cursor()
	for k, _ := cur.First(); k != nil; k, _ = cur.Next() {
		n++
	}
	return n
}

// numberKeyName turns a number key ("101/A/0000042") into Spanish words,
// for entries that name no readable CFE.
func numberKeyName(nk []byte) string {
	parts := strings.Split(string(nk), "/")
	if len(parts) != 3 {
		return string(nk)
	}
	t, err1 := strconv.Atoi(parts[0])
	n, err2 := strconv.ParseInt(parts[2], 10, 64)
	if err1 != nil || err2 != nil {
		return string(nk)
	}
	return fmt.Sprintf("%s serie %s número %d", cfe.Type(t).Name(), parts[1], n)
}
