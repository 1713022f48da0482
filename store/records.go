package store

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/shopspring/decimal"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// schemaVersion is the version of the file layout and record encoding written
// by this package. Bump it, and teach Open to migrate, when either changes in a
// way older code could not read.
//
// Version 2 moved the signed XML out of the CFE record into the xml bucket
// (see migrateV1); version 3 stores it compressed (xmlcodec.go, migrateV2);
// version 4 adds the search bucket (search.go, migrateV3).
const schemaVersion = 4

var (
	bucketMeta     = []byte("meta")
	bucketRanges   = []byte("ranges")
	bucketCounters = []byte("counters")
	bucketCFEs     = []byte("cfes")
	bucketXML      = []byte("xml")
	bucketByNumber = []byte("by_number")
	bucketByTime   = []byte("by_time")
	bucketOutbox   = []byte("outbox")
	bucketRejected = []byte("rejected")
	bucketAudit    = []byte("audit")
	// bucketQuarantine holds the outbox entries whose CFE cannot be read
	// back (quarantine.go), under their commit sequence.
	bucketQuarantine = []byte("quarantine")

	allBuckets = [][]byte{bucketMeta, bucketRanges, bucketCounters, bucketCFEs, bucketXML,
		bucketByNumber, bucketByTime, bucketOutbox, bucketRejected, bucketAudit, bucketQuarantine, bucketSearch}

	keySchema = []byte("schema")
)

// seqKey names one numbering sequence: a CFE type and a serie.
type seqKey struct {
	Type  cfe.Type
	Serie string
}

func (k seqKey) String() string { return fmt.Sprintf("%03d/%s", int(k.Type), k.Serie) }

// counterKey is the key of k's counter: "101/A".
func counterKey(k seqKey) []byte { return []byte(k.String()) }

// numberKey is the key of a CFE in by_number: "101/A/0000042". Numbers have at
// most 7 digits (NroCFEType) and '/' sorts below every serie character, so the
// keys of one sequence are contiguous and sorted by number.
func numberKey(k seqKey, nro int64) []byte { return fmt.Appendf(nil, "%s/%07d", k, nro) }

// timeLayout writes signature times with a fixed width, so that keys sort by
// time. Montevideo has a fixed offset, so local order is instant order.
const timeLayout = "2006-01-02T15:04:05.000000000"

// timeKey is the key of a CFE in by_time: its signature time in Montevideo,
// then its number key. The first 10 bytes are the signature date.
func timeKey(tmst time.Time, k seqKey, nro int64) []byte {
	return fmt.Appendf(nil, "%s|%s", tmst.In(cfe.Montevideo).Format(timeLayout), numberKey(k, nro))
}

// seqBytes encodes a bucket sequence as a big-endian key, so keys sort in
// sequence order.
func seqBytes(n uint64) []byte { return binary.BigEndian.AppendUint64(nil, n) }

func seqOf(key []byte) uint64 { return binary.BigEndian.Uint64(key) }

// counterRecord is the value of a counter: the last committed number of a
// sequence.
type counterRecord struct {
	Type  cfe.Type `json:"type"`
	Serie string   `json:"serie"`
	Last  int64    `json:"last"`
}

// rangeRecord is the stored form of a cfe.CAERange.
type rangeRecord struct {
	ID           string   `json:"id"`
	RUC          string   `json:"ruc"`
	Type         cfe.Type `json:"type"`
	Serie        string   `json:"serie"`
	DNro         int64    `json:"dnro"`
	HNro         int64    `json:"hnro"`
	CAEID        string   `json:"cae_id"`
	Autorizado   cfe.Date `json:"authorized"`
	Vencimiento  cfe.Date `json:"expires"`
	CAEEspecial  int      `json:"cae_especial,omitempty"`
	CausalCAEEsp int      `json:"causal_cae_esp,omitempty"`
	Source       string   `json:"source"`
	SignedXML    []byte   `json:"signed_xml,omitempty"`
}

func toRangeRecord(r cfe.CAERange) rangeRecord {
	return rangeRecord{ID: r.ID, RUC: r.RUC, Type: r.Type, Serie: r.Serie, DNro: r.DNro, HNro: r.HNro,
		CAEID: r.CAEID, Autorizado: r.Autorizado, Vencimiento: r.Vencimiento, CAEEspecial: r.CAEEspecial,
		CausalCAEEsp: r.CausalCAEEsp, Source: r.Source, SignedXML: r.SignedXML}
}

func (r rangeRecord) domain() cfe.CAERange {
	return cfe.CAERange{ID: r.ID, RUC: r.RUC, Type: r.Type, Serie: r.Serie, DNro: r.DNro, HNro: r.HNro,
		CAEID: r.CAEID, Autorizado: r.Autorizado, Vencimiento: r.Vencimiento, CAEEspecial: r.CAEEspecial,
		CausalCAEEsp: r.CausalCAEEsp, Source: r.Source, SignedXML: r.SignedXML}
}

// issuedRecord is the stored form of a cfe.Issued, plus what only the store
// needs: when it was committed and its commit sequence, which keys its outbox
// entry and its signed XML. The XML is not part of the JSON record: it is
// stored as it is in the xml bucket, so the record stays small (delivery
// updates rewrite only the record) and the XML is neither base64-encoded nor
// copied between leaves, since its keys only grow.
type issuedRecord struct {
	UUID         string          `json:"uuid"`
	Type         cfe.Type        `json:"type"`
	Serie        string          `json:"serie"`
	Nro          int64           `json:"nro"`
	RangeID      string          `json:"range_id"`
	CAE          caeRecord       `json:"cae"`
	TmstFirma    time.Time       `json:"tmst_firma"`
	XML          []byte          `json:"-"` // in the xml bucket under OutboxSeq
	Adenda       string          `json:"adenda,omitempty"`
	CodSeguridad string          `json:"cod_seguridad"`
	DatosQR      string          `json:"datos_qr"`
	Total        decimal.Decimal `json:"total"`
	RequestHash  string          `json:"request_hash,omitempty"`
	Delivery     deliveryRecord  `json:"delivery"`
	CommittedAt  time.Time       `json:"committed_at"`
	OutboxSeq    uint64          `json:"outbox_seq"` // commit sequence
	// A keyed-in contingency receipt sent again corrected after DGI
	// observed it (keyed.go): the new one names the one it corrects, which
	// names the one that corrected it.
	Corrects    string `json:"corrects,omitempty"`
	CorrectedBy string `json:"corrected_by,omitempty"`

	zxml  encodedXML // XML compressed by Commit, written by putCommit
	words []string   // search words read by Commit from the XML (search.go), written by putCommit
}

type caeRecord struct {
	CAEID        string   `json:"cae_id"`
	DNro         int64    `json:"dnro"`
	HNro         int64    `json:"hnro"`
	FecVenc      cfe.Date `json:"fec_venc"`
	CAEEspecial  int      `json:"cae_especial,omitempty"`
	CausalCAEEsp int      `json:"causal_cae_esp,omitempty"`
}

type deliveryRecord struct {
	State       string    `json:"state"`
	HostedID    int64     `json:"hosted_id,omitempty"`
	Reason      string    `json:"reason,omitempty"`
	Attempts    int       `json:"attempts,omitempty"`
	LastAttempt time.Time `json:"last_attempt,omitzero"`
}

func toCAERecord(c cfe.CAEData) caeRecord {
	return caeRecord{CAEID: c.CAEID, DNro: c.DNro, HNro: c.HNro, FecVenc: c.FecVenc,
		CAEEspecial: c.CAEEspecial, CausalCAEEsp: c.CausalCAEEsp}
}

func toIssuedRecord(d *cfe.Issued) issuedRecord {
	return issuedRecord{
		UUID: d.UUID, Type: d.Type, Serie: d.Serie, Nro: d.Nro, RangeID: d.RangeID, CAE: toCAERecord(d.CAE),
		TmstFirma: d.TmstFirma, XML: d.XML, Adenda: d.Adenda, CodSeguridad: d.CodSeguridad,
		DatosQR: d.DatosQR, Total: d.Total, RequestHash: d.RequestHash, Corrects: d.Corrects, CorrectedBy: d.CorrectedBy,
		Delivery: deliveryRecord{State: d.Delivery.State, HostedID: d.Delivery.HostedID,
			Reason: d.Delivery.Reason, Attempts: d.Delivery.Attempts, LastAttempt: d.Delivery.LastAttempt},
	}
}

// domain returns the cfe.Issued the record holds. Times come back in
// cfe.Montevideo, the zone DGI writes them in.
func (r *issuedRecord) domain() *cfe.Issued {
	c := r.CAE
	return &cfe.Issued{
		UUID: r.UUID, Type: r.Type, Serie: r.Serie, Nro: r.Nro, RangeID: r.RangeID,
		CAE: cfe.CAEData{CAEID: c.CAEID, DNro: c.DNro, HNro: c.HNro, FecVenc: c.FecVenc,
			CAEEspecial: c.CAEEspecial, CausalCAEEsp: c.CausalCAEEsp},
		TmstFirma: inMontevideo(r.TmstFirma), XML: r.XML, Adenda: r.Adenda, CodSeguridad: r.CodSeguridad,
		DatosQR: r.DatosQR, Total: r.Total, RequestHash: r.RequestHash, Corrects: r.Corrects, CorrectedBy: r.CorrectedBy,
		Delivery: cfe.Delivery{State: r.Delivery.State, HostedID: r.Delivery.HostedID,
			Reason: r.Delivery.Reason, Attempts: r.Delivery.Attempts,
			LastAttempt: inMontevideo(r.Delivery.LastAttempt)},
	}
}

func (r *issuedRecord) key() seqKey { return seqKey{r.Type, r.Serie} }

func inMontevideo(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.In(cfe.Montevideo)
}

// outboxEntry is the value of an outbox (or rejected) entry.
type outboxEntry struct {
	UUID        string    `json:"uuid"`
	CommittedAt time.Time `json:"committed_at"`
}
