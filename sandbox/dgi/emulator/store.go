package emulator

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/dgi"
)

// The emulator's records, in one bbolt file in its data directory
// (DBFile): what DGI received and decided, so that a restart keeps every
// answer, every E02 and S08 and every count.
var (
	bucketMeta       = []byte("meta")        // counters, clock offset
	bucketEnvelopes  = []byte("envelopes")   // IDReceptor → envelopeRecord
	bucketEnvIndex   = []byte("envelopeids") // RUC/Idemisor → IDReceptor of the envelope received (AS)
	bucketCFEs       = []byte("cfes")        // RUC/type/serie/nro → cfeRecord
	bucketReports    = []byte("reports")     // IDReceptor → reportRecord
	bucketReportSeq  = []byte("reportseq")   // RUC/FechaResumen → last SecEnvio received (AR)
	bucketRejections = []byte("rejections")  // RUC/type/serie/nro → Rejection (knob)

	allBuckets = [][]byte{bucketMeta, bucketEnvelopes, bucketEnvIndex, bucketCFEs, bucketReports, bucketReportSeq, bucketRejections}

	metaNextReceptor  = []byte("nextreceptor")  // last IDReceptor given (envelopes and reports share it, as DGI's)
	metaNextRespuesta = []byte("nextrespuesta") // last IDRespuesta given
	metaClockOffset   = []byte("clockoffset")   // the injected clock's offset, nanoseconds
)

// DBFile is the emulator's data file in its data directory.
const DBFile = "cfe-sandbox-dgi.db"

// openTimeout is how long Open waits for another process's lock.
const openTimeout = 2 * time.Second

func openDB(dir string) (*bolt.DB, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("emulador DGI: no se pudo crear el directorio de datos: %w", err)
	}
	path := filepath.Join(dir, DBFile)
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: openTimeout})
	if errors.Is(err, berrors.ErrTimeout) {
		return nil, fmt.Errorf("emulador DGI: %s está en uso por otro proceso cfe-sandbox dgi", path)
	}
	if err != nil {
		return nil, fmt.Errorf("emulador DGI: no se pudo abrir %s: %w", path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range allBuckets {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, errors.Join(err, db.Close())
	}
	return db, nil
}

func idKey(id int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(id)) }

// next takes the next number of a counter in meta.
func next(tx *bolt.Tx, key []byte) (int64, error) {
	m := tx.Bucket(bucketMeta)
	n, _ := strconv.ParseInt(string(m.Get(key)), 10, 64)
	n++
	return n, m.Put(key, []byte(strconv.FormatInt(n, 10)))
}

func getJSON(b *bolt.Bucket, key []byte, v any) (bool, error) {
	raw := b.Get(key)
	if raw == nil {
		return false, nil
	}
	return true, json.Unmarshal(raw, v)
}

func putJSON(b *bolt.Bucket, key []byte, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return b.Put(key, raw)
}

// cfeKey names a CFE of an issuer.
func cfeKey(ruc string, tipo cfe.Type, serie string, nro int64) []byte {
	return fmt.Appendf(nil, "%s/%d/%s/%d", ruc, int(tipo), serie, nro)
}

// envelopeRecord is an envelope DGI received (AS or BS) and its verdicts.
type envelopeRecord struct {
	IDReceptor  int64
	IDRespuesta int64
	RUCEmisor   string
	IdEmisor    int64
	CantCFE     int
	Received    time.Time
	Estado      string
	Motivos     []dgi.Motivo
	Token       string    `json:",omitempty"`
	Fechahora   time.Time `json:",omitzero"` // when the verdicts may be asked for
	CFEs        []verdict `json:",omitempty"`
	Dropped     bool      `json:",omitempty"` // the connection was cut after it was recorded (knob)
}

// verdict is DGI's decision on one CFE of an envelope.
type verdict struct {
	Ordinal  int
	Tipo     cfe.Type
	Serie    string
	Nro      int64
	FechaCFE cfe.Date  `json:",omitzero"`
	TmstCFE  time.Time `json:",omitzero"`
	Estado   string
	Motivos  []dgi.Motivo          `json:",omitempty"`
	Original *dgi.OriginalEnvelope `json:",omitempty"`
}

// cfeRecord is what DGI knows of one CFE: the envelope that first carried
// it and its verdict there, and how many envelopes carried it.
type cfeRecord struct {
	RUCEmisor  string
	Tipo       cfe.Type
	Serie      string
	Nro        int64
	IDReceptor int64  // the first envelope received (AS) that carried it; 0 when none yet
	Estado     string // its verdict there
	Envelopes  int    // every envelope (AS or BS) that carried it
	// Registered: DGI holds the number (AE, CE, or BE other than E02/E09):
	// another envelope carrying it gets E02.
	Registered bool
	// Signed is its signature date in Montevideo (TmstFirma), the day whose
	// report must count it; zero in records older than the daily report.
	Signed cfe.Date `json:",omitzero"`
}

// reportRecord is a daily report DGI received.
type reportRecord struct {
	IDReceptor   int64
	RUCEmisor    string
	FechaResumen cfe.Date
	SecEnvio     int
	Received     time.Time
	Estado       string
	Motivos      []dgi.Motivo `json:",omitempty"`
	// Summary is what the report declares, read at reception (nil for a
	// report rejected before it could be read).
	Summary *reportSummary `json:",omitempty"`
	// Later is the state DGI's processing gave it (DR, ER; FR when a later
	// SecEnvio of the day was received), "" until then; Findings are the
	// inconsistencies behind an ER.
	Later    string       `json:",omitempty"`
	Findings []dgi.Motivo `json:",omitempty"`
}

// Rejection is a knob: the CFE it names gets Code (and Detalle) instead of
// the emulator's own verdict, whichever envelope carries it. RUCEmisor ""
// applies to every issuer.
type Rejection struct {
	RUCEmisor string   `json:"rucEmisor,omitempty"`
	TipoCFE   cfe.Type `json:"tipoCFE"`
	Serie     string   `json:"serie"`
	Nro       int64    `json:"nro"`
	Codigo    string   `json:"codigo"`
	Detalle   string   `json:"detalle,omitempty"`
}

func (r Rejection) key() []byte {
	ruc := r.RUCEmisor
	if ruc == "" {
		ruc = "*"
	}
	return cfeKey(ruc, r.TipoCFE, r.Serie, r.Nro)
}

// check says what is wrong with a rejection knob, "" when nothing.
func (r Rejection) check() string {
	info, ok := r.TipoCFE.Info()
	switch {
	case !ok:
		return fmt.Sprintf("tipoCFE %d desconocido", int(r.TipoCFE))
	case r.Serie == "" || r.Nro <= 0:
		return "indique serie y nro"
	case r.RUCEmisor != "" && !cfe.ValidRUC(r.RUCEmisor):
		return fmt.Sprintf("rucEmisor %q no es un RUC válido", r.RUCEmisor)
	case info.Contingency && dgi.CFCObservations[r.Codigo] == "":
		return fmt.Sprintf("un comprobante de contingencia (%d) no se rechaza: se observa con un código C03–C15 (%q no lo es)", int(r.TipoCFE), r.Codigo)
	case !info.Contingency && dgi.CFERejections[r.Codigo] == "":
		return fmt.Sprintf("%q no es un motivo de rechazo de CFE de DGI (E01–E15)", r.Codigo)
	case len(r.Detalle) > 500:
		return "el detalle admite hasta 500 caracteres"
	}
	return ""
}
