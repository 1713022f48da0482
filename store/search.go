package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"

	bolt "go.etcd.io/bbolt"
	"golang.org/x/text/runes"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// Search: finding any receipt among millions (the /caja page, GET
// /comprobantes). The search bucket (schema 4) holds two indexes, written in
// the same transaction as the CFE they describe (putCommit):
//
//   - "c/<YYYY-MM-DD>|<type>/<serie>" → the number of CFEs of that sequence
//     signed that day (Montevideo), 8 bytes big-endian. It counts every CFE
//     the store ever committed, live or archived: Archive leaves it alone,
//     so that a search's total and the page it starts at are read from a
//     few thousand counters instead of counting millions of keys.
//   - "w/<word>\x00<by_time key>" → empty: one key per word of the
//     receiver's name, its document (one word of its letters and digits)
//     and the lines' names, lower-case and without accents, of 3 characters
//     or more with a letter (wordsOf).
//     A search word matches the words it begins. Archived CFEs keep their
//     words here (Archive does not move them), so that a text search finds
//     every year; a CFE is then read from wherever it is (FindByNumber).
//
// Schema 3 files get both indexes from migrateV3, over the live file and
// the archives. A page is sorted newest first.

var bucketSearch = []byte("search")

const (
	searchCountPrefix = "c/"
	searchWordPrefix  = "w/"
	// maxWordLen bounds an indexed word, in bytes; longer words are cut
	// (a search word longer than that is cut the same way).
	maxWordLen = 32
	// maxTextMatches bounds the keys one search word reads: a word found in
	// more CFEs than that counts only its most recent ones
	// (SearchResult.Limited).
	maxTextMatches = 10000
	// MaxSearchPage is the largest page Search returns.
	MaxSearchPage = 100
)

// unaccent returns a transformer that takes accents off letters (á → a,
// ñ → n, ü → u). A transformer keeps state: one per use.
func unaccent() transform.Transformer {
	return transform.Chain(norm.NFD, runes.Remove(runes.In(unicode.Mn)), norm.NFC)
}

// searchWords returns the distinct words of texts, lower-case and without
// accents: runs of letters and digits, at least minWord characters long (a
// document is given whole as doc: its letters and digits form one word).
func searchWords(doc string, texts ...string) []string {
	return wordsOf(minWord, doc, texts...)
}

// Indexed words have at least minIndexed characters and a letter (names'
// "1", "kg", "de", "900" would take index room and find nothing useful; a
// document is indexed whole whatever it is); a search word at least
// minWord, and it matches the indexed words it begins.
const (
	minIndexed = 3
	minWord    = 2
)

func wordsOf(least int, doc string, texts ...string) []string {
	var out []string
	add := func(w string, any bool) {
		if len(w) > maxWordLen {
			w = w[:maxWordLen]
			for !utf8ValidEnd(w) {
				w = w[:len(w)-1]
			}
		}
		if len([]rune(w)) >= least && (any || strings.IndexFunc(w, unicode.IsLetter) >= 0) && !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	if d := normalizeText(doc); d != "" {
		add(strings.Join(strings.FieldsFunc(d, notWordRune), ""), true)
	}
	for _, t := range texts {
		for _, w := range strings.FieldsFunc(normalizeText(t), notWordRune) {
			add(w, least == minWord)
		}
	}
	return out
}

// utf8ValidEnd reports whether s does not end in a cut character.
func utf8ValidEnd(s string) bool { return strings.ToValidUTF8(s, "\x00") == s }

func notWordRune(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }

// normalizeText lower-cases s and takes its accents off.
func normalizeText(s string) string {
	out, _, err := transform.String(unaccent(), s)
	if err != nil {
		out = s
	}
	return strings.ToLower(out)
}

// wordsOfXML returns the search words of a signed CFE; none when it cannot
// be read (the CFE is still found by date and number).
func wordsOfXML(signed []byte) []string {
	st, err := cfe.ReadSearchText(signed)
	if err != nil {
		return nil
	}
	return wordsOfText(st)
}

// wordsOfText returns the search words of a CFE's search text.
func wordsOfText(st cfe.SearchText) []string {
	return wordsOf(minIndexed, st.Document, append([]string{st.Receiver}, st.Items...)...)
}

// wordsOfIssued returns the search words of doc: from its Search when its
// maker set it, else read from its XML.
func wordsOfIssued(doc *cfe.Issued) []string {
	if doc.Search != nil {
		return wordsOfText(*doc.Search)
	}
	return wordsOfXML(doc.XML)
}

// countKey is the key of the day's counter of sequence k: "c/2026-11-28|101/A".
func countKey(day []byte, k string) []byte {
	return append(append(append([]byte(searchCountPrefix), day...), '|'), k...)
}

// wordKey is the key of word w of the CFE whose by_time key is tk.
func wordKey(w string, tk []byte) []byte {
	b := make([]byte, 0, len(searchWordPrefix)+len(w)+1+len(tk))
	return append(append(append(append(b, searchWordPrefix...), w...), 0), tk...)
}

// putSearch writes the search entries of the CFE with by_time key tk,
// sequence k and words words into the search bucket of tx.
func putSearch(tx *bolt.Tx, tk []byte, k seqKey, words []string) error {
	b := tx.Bucket(bucketSearch)
	if err := addCount(b, countKey(tk[:10], k.String()), 1); err != nil {
		return err
	}
	for _, w := range words {
		if err := b.Put(wordKey(w, tk), []byte{}); err != nil {
			return err
		}
	}
	return nil
}

func addCount(b *bolt.Bucket, key []byte, n uint64) error {
	var cur uint64
	if v := b.Get(key); len(v) == 8 {
		cur = binary.BigEndian.Uint64(v)
	}
	return b.Put(key, binary.BigEndian.AppendUint64(nil, cur+n))
}

// SearchQuery is what Search looks for. Zero fields do not filter.
type SearchQuery struct {
	From, To cfe.Date // signature dates, inclusive (Montevideo)
	Type     cfe.Type
	Serie    string
	Nro      int64
	// Text matches CFEs having, for each of its words, a word of the
	// receiver's name or document or of a line's name that begins with it
	// (case and accents ignored).
	Text     string
	Page     int // 1 for the first page
	PageSize int // 1 to MaxSearchPage
}

// SearchResult is one page of a search.
type SearchResult struct {
	// Total is how many CFEs match (all pages).
	Total int
	// Limited: a search word matched more than maxTextMatches CFEs and only
	// its most recent ones were considered (Total counts those).
	Limited bool
	// CFEs is the page, newest first, each with its signed XML.
	CFEs []*cfe.Issued
}

// Search finds signed CFEs, live or archived, newest first, one page at a
// time (see the search bucket above).
//
// Errors: EINVALID for reversed dates, a page below 1 or a page size out of
// range, or a text without any word; EUNAVAILABLE when ctx is done.
func (db *DB) Search(ctx context.Context, q SearchQuery) (SearchResult, error) {
	const op = "store.Search"
	var fs []cfe.FieldError
	if !q.From.IsZero() && !q.To.IsZero() && q.To.Before(q.From) {
		fs = append(fs, field("hasta", "no puede ser anterior a desde (%s)", q.From))
	}
	if q.Page < 1 {
		fs = append(fs, field("pagina", "debe ser 1 o más"))
	}
	if q.PageSize < 1 || q.PageSize > MaxSearchPage {
		fs = append(fs, field("tamano", "debe estar entre 1 y %d", MaxSearchPage))
	}
	if q.Nro < 0 {
		fs = append(fs, field("numero", "no puede ser negativo"))
	}
	var words []string
	if strings.TrimSpace(q.Text) != "" {
		words = searchWords("", q.Text)
		if len(words) == 0 {
			fs = append(fs, field("texto", "debe tener al menos una palabra de 2 letras o números"))
		}
	}
	if len(fs) > 0 {
		return SearchResult{}, invalid(op, fs...)
	}
	var (
		keys [][]byte // by_time keys of the page
		res  SearchResult
		err  error
	)
	switch {
	case q.Nro > 0:
		return db.searchNumber(ctx, op, q, words)
	case len(words) > 0:
		keys, res.Total, res.Limited, err = db.searchText(ctx, op, q, words)
	default:
		keys, res.Total, err = db.searchDates(ctx, op, q)
	}
	if err != nil {
		return SearchResult{}, err
	}
	res.CFEs, err = db.resolve(ctx, keys)
	return res, err
}

// keyFilter tells the by_time keys of the CFEs a query's dates, type and
// serie select, without allocating.
type keyFilter struct {
	from, to []byte // "YYYY-MM-DD"; nil: unbounded
	typ      []byte // "101/"; nil: any
	serie    []byte // nil: any
}

func (q SearchQuery) filter() keyFilter {
	var f keyFilter
	if !q.From.IsZero() {
		f.from = []byte(q.From.String())
	}
	if !q.To.IsZero() {
		f.to = []byte(q.To.String())
	}
	if q.Type != 0 {
		f.typ = fmt.Appendf(nil, "%03d/", int(q.Type))
	}
	if q.Serie != "" {
		f.serie = []byte(q.Serie)
	}
	return f
}

// matches reports whether the by_time key tk ("<time>|101/A/0000042") is of
// a CFE the filter selects.
func (f keyFilter) matches(tk []byte) bool {
	if len(tk) < 10 {
		return false
	}
	day := tk[:10]
	if f.from != nil && bytes.Compare(day, f.from) < 0 || f.to != nil && bytes.Compare(day, f.to) > 0 {
		return false
	}
	if f.typ == nil && f.serie == nil {
		return true
	}
	i := bytes.IndexByte(tk, '|')
	if i < 0 {
		return false
	}
	nk := tk[i+1:]
	if f.typ != nil && !bytes.HasPrefix(nk, f.typ) {
		return false
	}
	if f.serie != nil {
		rest := nk[min(len(nk), 4):]
		j := bytes.IndexByte(rest, '/')
		if j < 0 || !bytes.Equal(rest[:j], f.serie) {
			return false
		}
	}
	return true
}

// searchDates pages through the CFEs of q's dates, type and serie, by the
// day counters: only the days of the page are read.
func (db *DB) searchDates(ctx context.Context, op string, q SearchQuery) ([][]byte, int, error) {
	type dayCount struct {
		day string
		n   int
	}
	var days []dayCount // ascending
	total := 0
	err := db.view(ctx, op, func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketSearch).Cursor()
		start := []byte(searchCountPrefix)
		if !q.From.IsZero() {
			start = append(start, q.From.String()...)
		}
		to := ""
		if !q.To.IsZero() {
			to = q.To.String()
		}
		typ := fmt.Sprintf("%03d", int(q.Type))
		for k, v := c.Seek(start); k != nil && bytes.HasPrefix(k, []byte(searchCountPrefix)); k, v = c.Next() {
			rest := k[len(searchCountPrefix):]
			day, seq, ok := bytes.Cut(rest, []byte("|"))
			if !ok || len(v) != 8 {
				continue
			}
			if to != "" && string(day) > to {
				break
			}
			if q.Type != 0 || q.Serie != "" {
				ts, serie, ok := strings.Cut(string(seq), "/")
				if !ok || q.Serie != "" && serie != q.Serie || q.Type != 0 && ts != typ {
					continue
				}
			}
			n := int(binary.BigEndian.Uint64(v))
			if len(days) > 0 && days[len(days)-1].day == string(day) {
				days[len(days)-1].n += n
			} else {
				days = append(days, dayCount{string(day), n})
			}
			total += n
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	skip := (q.Page - 1) * q.PageSize
	var page [][]byte
	for i := len(days) - 1; i >= 0 && len(page) < q.PageSize; i-- {
		if skip >= days[i].n {
			skip -= days[i].n
			continue
		}
		d, err := cfe.ParseDate(days[i].day)
		if err != nil {
			continue
		}
		keys, err := db.dayKeys(ctx, op, d, q)
		if err != nil {
			return nil, 0, err
		}
		if skip >= len(keys) {
			skip -= len(keys)
			continue
		}
		keys = keys[skip:]
		skip = 0
		page = append(page, keys[:min(len(keys), q.PageSize-len(page))]...)
	}
	return page, total, nil
}

// dayKeys returns the by_time keys of day d that q selects, from the live
// file and the archive of its year, newest first, each once.
func (db *DB) dayKeys(ctx context.Context, op string, d cfe.Date, q SearchQuery) ([][]byte, error) {
	start, end := []byte(d.String()), []byte(d.AddDays(1).String())
	var keys [][]byte
	f := q.filter()
	collect := func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketByTime).Cursor()
		for k, _ := c.Seek(start); k != nil && bytes.Compare(k, end) < 0; k, _ = c.Next() {
			if f.matches(k) {
				keys = append(keys, bytes.Clone(k))
			}
		}
		return nil
	}
	if err := db.view(ctx, op, collect); err != nil {
		return nil, err
	}
	if slices.Contains(db.archiveYears(), d.Year) {
		if err := db.viewArchive(op, d.Year, collect); err != nil {
			return nil, asError(op, err)
		}
	}
	return newestFirst(keys), nil
}

// newestFirst sorts by_time keys newest first and drops repeats (a CFE in an
// archive and the live file at once, between the two steps of an
// interrupted move).
func newestFirst(keys [][]byte) [][]byte {
	slices.SortFunc(keys, func(a, b []byte) int { return bytes.Compare(b, a) })
	return slices.CompactFunc(keys, bytes.Equal)
}

// searchText finds the CFEs having every word of words (as a prefix of one
// of theirs) among those q's dates, type and serie select.
func (db *DB) searchText(ctx context.Context, op string, q SearchQuery, words []string) ([][]byte, int, bool, error) {
	var keys [][]byte
	limited := false
	f := q.filter()
	err := db.view(ctx, op, func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketSearch).Cursor()
		for i, w := range words {
			var prev map[string]struct{}
			if i > 0 {
				prev = make(map[string]struct{}, len(keys))
				for _, k := range keys {
					prev[string(k)] = struct{}{}
				}
			}
			prefix := []byte(searchWordPrefix + w)
			var got [][]byte
			// From the last key of the prefix backward: a word in more
			// CFEs than maxTextMatches keeps its most recent ones.
			k, _ := c.Seek(append(bytes.Clone(prefix), 0xff))
			if k == nil {
				k, _ = c.Last()
			} else {
				k, _ = c.Prev()
			}
			n := 0
			for ; k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Prev() {
				if n++; n > maxTextMatches {
					limited = true
					break
				}
				j := bytes.IndexByte(k, 0)
				if j < 0 {
					continue
				}
				tk := k[j+1:]
				if !f.matches(tk) {
					continue
				}
				if prev != nil {
					if _, ok := prev[string(tk)]; !ok {
						continue
					}
				}
				got = append(got, bytes.Clone(tk))
			}
			keys = got
			if len(keys) == 0 {
				break
			}
		}
		return nil
	})
	if err != nil {
		return nil, 0, false, err
	}
	keys = newestFirst(keys)
	total := len(keys)
	from := (q.Page - 1) * q.PageSize
	if from >= len(keys) {
		return nil, total, limited, nil
	}
	return keys[from:min(len(keys), from+q.PageSize)], total, limited, nil
}

// searchNumber finds the CFEs numbered q.Nro of every sequence q's type and
// serie select, then keeps those its dates and words select.
func (db *DB) searchNumber(ctx context.Context, op string, q SearchQuery, words []string) (SearchResult, error) {
	var seqs []seqKey
	err := db.view(ctx, op, func(tx *bolt.Tx) error {
		err := tx.Bucket(bucketCounters).ForEach(func(k, _ []byte) error {
			ts, serie, ok := strings.Cut(string(k), "/")
			if !ok {
				return nil
			}
			t, _, _, ok := parseNumberKey([]byte(ts + "/" + serie + "/0"))
			if ok && (q.Type == 0 || t == q.Type) && (q.Serie == "" || serie == q.Serie) {
				seqs = append(seqs, seqKey{t, serie})
			}
			return nil
		})
		if err != nil {
			return err
		}
		// Keyed-in contingency forms (keyed.go) have no counter: their
		// sequences are their ranges'.
		ranges, err := loadRanges(tx)
		for _, r := range ranges {
			k := seqKey{r.Type, r.Serie}
			if info, ok := r.Type.Info(); ok && info.Contingency && (q.Type == 0 || r.Type == q.Type) &&
				(q.Serie == "" || r.Serie == q.Serie) && !slices.Contains(seqs, k) {
				seqs = append(seqs, k)
			}
		}
		return err
	})
	if err != nil {
		return SearchResult{}, err
	}
	var all []*cfe.Issued
	for _, k := range seqs {
		is, err := db.FindByNumber(ctx, k.Type, k.Serie, q.Nro)
		if cfe.ErrorCode(err) == cfe.ENOTFOUND {
			continue
		}
		if err != nil {
			return SearchResult{}, err
		}
		if !q.filter().matches(timeKey(is.TmstFirma, k, is.Nro)) {
			continue
		}
		if len(words) > 0 && !hasWords(wordsOfXML(is.XML), words) {
			continue
		}
		all = append(all, is)
	}
	slices.SortFunc(all, func(a, b *cfe.Issued) int { return b.TmstFirma.Compare(a.TmstFirma) })
	res := SearchResult{Total: len(all)}
	if from := (q.Page - 1) * q.PageSize; from < len(all) {
		res.CFEs = all[from:min(len(all), from+q.PageSize)]
	}
	return res, nil
}

// hasWords reports whether every search word begins one of have.
func hasWords(have, words []string) bool {
	for _, w := range words {
		if !slices.ContainsFunc(have, func(h string) bool { return strings.HasPrefix(h, w) }) {
			return false
		}
	}
	return true
}

// resolve reads the CFEs of by_time keys, from the live file or an archive.
func (db *DB) resolve(ctx context.Context, keys [][]byte) ([]*cfe.Issued, error) {
	out := make([]*cfe.Issued, 0, len(keys))
	for _, k := range keys {
		_, nk, ok := bytes.Cut(k, []byte("|"))
		if !ok {
			continue
		}
		t, serie, nro, ok := parseNumberKey(nk)
		if !ok {
			continue
		}
		is, err := db.FindByNumber(ctx, t, serie, nro)
		if errors.Is(err, ErrRecordDamaged) {
			// Listed all the same, as Last does, from what its key says.
			if is, ok = fromTimeKey(k); ok {
				is.Delivery.State = cfe.DeliveryQuarantined
				out = append(out, is)
				continue
			}
		}
		if err != nil {
			return nil, err
		}
		out = append(out, is)
	}
	return out, nil
}
