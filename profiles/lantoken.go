package profiles

import (
	"bufio"
	"bytes"
	"crypto/rand"
	_ "embed"
	"math"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MinLANTokenBits is the entropy a LAN token needs, as LANTokenBits
// estimates it: 2^128 tries are out of reach at any rate, and the local
// module lets a guesser try about 60 tokens a minute at most.
const MinLANTokenBits = 128

// maxTokenLen caps a LAN token's length, in characters.
const maxTokenLen = 256

// The format of NewLANToken.
const (
	// lanTokenAlphabet is Douglas Crockford's base32 alphabet in lower case:
	// the digits and the letters but i, l, o and u, so that no character
	// is mistaken for another when a technician types it.
	lanTokenAlphabet = "0123456789abcdefghjkmnpqrstvwxyz"
	lanTokenGroups   = 7
	lanTokenGroupLen = 4
)

// NewLANToken returns a fresh LAN token made with crypto/rand: 28 characters
// of lanTokenAlphabet in seven groups of four joined by hyphens, such as
// "7k2m-q9xd-4hwp-c2nv-tr6b-5fja-3vgy": 140 bits, safe in a URL, a header and
// config.yaml, and short enough to type. A draw that LANTokenBits would rate
// under MinLANTokenBits (a common word or a run such as "aaa" that chance put
// in it, about one draw in a hundred) is drawn again, which takes far less
// than a bit from the 140.
func NewLANToken() string {
	for {
		var b [lanTokenGroups * lanTokenGroupLen]byte
		_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
		var tok strings.Builder
		for i, x := range b {
			if i > 0 && i%lanTokenGroupLen == 0 {
				tok.WriteByte('-')
			}
			tok.WriteByte(lanTokenAlphabet[x&31]) // 256 is a multiple of 32: every character is as likely
		}
		if bits, _ := rateToken(tok.String(), nil); bits >= MinLANTokenBits {
			return tok.String()
		}
	}
}

// LANTokenBits estimates how many bits of chance a token holds, given words
// an attacker knows about the shop (the profile's data). See rateToken.
func LANTokenBits(tok string, known []string) float64 {
	bits, _ := rateToken(tok, known)
	return bits
}

// weakness is the pattern that cost a token the most bits.
type weakness int

const (
	weakShort    weakness = iota // no pattern: too short for its characters
	weakRepeat                   // "aaaa", "abcabc"
	weakSequence                 // "1234", "abcd", "9876"
	weakKeyboard                 // "qwerty", "asdf"
	weakWord                     // a common word or password
	weakKnown                    // the profile's own data, or an example token
	weakUUID                     // a UUID: 122 random bits at most
)

// reasons say each weakness in Spanish.
var reasons = map[weakness]string{
	weakShort:    "es demasiado corto para los caracteres que usa",
	weakRepeat:   "repite caracteres o grupos de caracteres (como «aaaa» o «abab»)",
	weakSequence: "tiene secuencias (como «1234» o «abcd»)",
	weakKeyboard: "sigue filas del teclado (como «qwerty» o «asdf»)",
	weakWord:     "tiene palabras comunes, nombres o contraseñas conocidas",
	weakKnown:    "repite datos del perfil (RUC, nombre de la empresa o del perfil, equipos) o un token de ejemplo",
	weakUUID:     "es un UUID, que tiene a lo sumo 122 bits al azar",
}

// Costs, in bits, of the patterns rateToken recognises.
const (
	// wordBits is what a word of the list costs: about the rank a common
	// word has in the word lists password crackers try first (16 000).
	wordBits = 14
	// keyboardBits is where a keyboard row starts: a few rows, two
	// directions, ten places.
	keyboardBits = 7
	// uuidBits is the chance in a version 4 UUID; other versions have less.
	uuidBits = 122
)

// rateToken estimates the bits of chance in tok and the weakness that cost
// it the most. It is a small estimator written for LAN tokens, in the manner
// of zxcvbn: the token is read as the cheapest sequence of pieces a guesser
// would try, each piece costing
//
//   - a character: log2 of the smallest usual alphabet that holds all the
//     token's characters (10 digits, 16 hex, 32 base32, 26 or 36 or 52 or 62
//     letters and digits, 64 base64, 95 printable ASCII, more with non-ASCII
//     letters): a random token from any common generator is rated at what
//     it holds, and one of a few kinds of characters gets few bits each;
//   - a repeat ("aaa", "abab"): its block once, plus log2 of the count;
//   - a sequence ("abc", "4321"): its first character, its direction and
//     log2 of its length;
//   - a keyboard row ("qwerty", "asdf"): keyboardBits plus log2 of its length;
//   - a word of lantoken_words.txt (upper case and l33t spellings such as
//     "p4ssw0rd" included): wordBits, plus a bit each for case and l33t;
//   - a known string (the profile's data in known, an example token): a few bits.
//
// A lone kind of punctuation (the hyphens of "xxxx-xxxx") separates groups
// and costs nothing, nor does base64's trailing "=" padding; patterns are
// found across separators. A UUID is rated at most uuidBits.
//
// zxcvbn itself (its Go ports) was not used: it rates any random character
// at log2(10) bits, so a random 22-character token of letters and digits
// (131 bits) would need about 39 characters to pass, and it knows no
// Spanish. What this estimator does not catch: words that are not in its
// list are rated as random letters (a phrase of uncommon words is
// overrated), and it knows nothing of where a token was published.
func rateToken(tok string, known []string) (float64, weakness) {
	content := tokenContent(tok)
	n := len(content)
	if n == 0 {
		return 0, weakShort
	}
	perChar := math.Log2(float64(alphabetSize(content)))
	pieces := findPieces(content, perChar, known)

	// best[i] is the cheapest cost of content[i:], and how it starts.
	best := make([]float64, n+1)
	choice := make([]piece, n)
	for i := n - 1; i >= 0; i-- {
		best[i] = perChar + best[i+1]
		choice[i] = piece{start: i, end: i + 1, cost: perChar, kind: weakShort}
		for _, p := range pieces[i] {
			if c := p.cost + best[p.end]; c < best[i] {
				best[i], choice[i] = c, p
			}
		}
	}
	saved := map[weakness]float64{}
	for i := 0; i < n; i = choice[i].end {
		p := choice[i]
		saved[p.kind] += float64(p.end-p.start)*perChar - p.cost
	}
	bits, worst := best[0], weakShort
	for _, k := range []weakness{weakRepeat, weakSequence, weakKeyboard, weakWord, weakKnown} {
		if saved[k] > 0 && saved[k] > saved[worst] {
			worst = k
		}
	}
	if uuidRE.MatchString(tok) && bits > uuidBits {
		bits, worst = uuidBits, weakUUID
	}
	return bits, worst
}

var uuidRE = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// tokenContent returns tok's characters without its separators (one lone
// kind of ASCII punctuation, used between groups) and base64 padding.
func tokenContent(tok string) []rune {
	runes := []rune(strings.TrimRight(tok, "="))
	var puncts []rune
	for _, r := range runes {
		if r < utf8.RuneSelf && (unicode.IsPunct(r) || unicode.IsSymbol(r)) {
			if !slices.Contains(puncts, r) {
				puncts = append(puncts, r)
			}
		}
	}
	if len(puncts) != 1 {
		return runes
	}
	return slices.DeleteFunc(runes, func(r rune) bool { return r == puncts[0] })
}

// alphabets are the usual alphabets of tokens, smallest first.
var alphabets = []string{
	"0123456789",
	"0123456789abcdef",
	"0123456789ABCDEF",
	lanTokenAlphabet,
	strings.ToUpper(lanTokenAlphabet),
	"abcdefghijklmnopqrstuvwxyz234567", // RFC 4648 base32
	"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567",
	"abcdefghijklmnopqrstuvwxyz",
	"ABCDEFGHIJKLMNOPQRSTUVWXYZ",
	"0123456789abcdefghijklmnopqrstuvwxyz",
	"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ",
	"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
	"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
	"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-_", // base64url
	"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ+/", // base64
}

// printableASCII is how many printable ASCII characters there are.
const printableASCII = 95

// alphabetSize is the size of the smallest usual alphabet that holds every
// character of content; beyond printable ASCII, each distinct other
// character counts one more.
func alphabetSize(content []rune) int {
	for _, a := range alphabets {
		if !slices.ContainsFunc(content, func(r rune) bool { return !strings.ContainsRune(a, r) }) {
			return len(a)
		}
	}
	var others []rune
	for _, r := range content {
		if (r < ' ' || r > '~') && !slices.Contains(others, r) {
			others = append(others, r)
		}
	}
	return printableASCII + len(others)
}

// piece is a run of a token's content read as one pattern.
type piece struct {
	start, end int // content[start:end]
	cost       float64
	kind       weakness
}

// findPieces returns the patterns of content, by start.
func findPieces(content []rune, perChar float64, known []string) [][]piece {
	n := len(content)
	pieces := make([][]piece, n)
	add := func(p piece) { pieces[p.start] = append(pieces[p.start], p) }

	// Repeats: a block of l characters k times in a row ("aaa" from three,
	// "abab" from four characters).
	for i := range n {
		for l := 1; i+2*l <= n; l++ {
			k := 1
			for i+(k+1)*l <= n && slices.Equal(content[i:i+l], content[i+k*l:i+(k+1)*l]) {
				k++
			}
			for c := 2; c <= k; c++ {
				if c*l >= 3 {
					add(piece{start: i, end: i + c*l, cost: float64(l)*perChar + math.Log2(float64(c)), kind: weakRepeat})
				}
			}
		}
	}

	// Sequences: three or more characters of one kind, each one more (or
	// one less) than the one before.
	for i := range n {
		for _, step := range []rune{1, -1} {
			j := i + 1
			for j < n && content[j]-content[j-1] == step && sameKind(content[j], content[i]) {
				j++
			}
			for end := i + 3; end <= j; end++ {
				add(piece{start: i, end: end, cost: perChar + 1 + math.Log2(float64(end-i)), kind: weakSequence})
			}
		}
	}

	// Keyboard rows, words and known strings, found in the lower-case,
	// unaccented content and its l33t readings.
	lower := foldRunes(content)
	for _, v := range leetReadings(lower) {
		for i := range n {
			for end := i + 4; end <= n && end-i <= maxWordLen; end++ {
				s := string(v.runes[i:end])
				extra := 0.0
				if !slices.Equal(content[i:end], lower[i:end]) {
					extra++ // upper case
				}
				if v.changed(i, end) {
					extra++
				}
				switch {
				case onKeyboard(s):
					add(piece{start: i, end: end, cost: keyboardBits + math.Log2(float64(end-i)) + extra, kind: weakKeyboard})
				case words[s]:
					add(piece{start: i, end: end, cost: wordBits + extra, kind: weakWord})
				}
			}
		}
	}
	for _, k := range knownStrings(known) {
		kr := []rune(k)
		cost := math.Log2(float64(len(known)+len(exampleTokens)+1)) + 1
		for i := 0; i+len(kr) <= n; i++ {
			if slices.Equal(lower[i:i+len(kr)], kr) {
				add(piece{start: i, end: i + len(kr), cost: cost, kind: weakKnown})
			}
		}
	}
	return pieces
}

// sameKind reports whether a and b are both digits, both lower-case or both
// upper-case letters.
func sameKind(a, b rune) bool {
	switch {
	case unicode.IsDigit(a):
		return unicode.IsDigit(b)
	case unicode.IsLower(a):
		return unicode.IsLower(b)
	case unicode.IsUpper(a):
		return unicode.IsUpper(b)
	}
	return false
}

// foldRunes lower-cases rs and takes the accents off Spanish vowels (ñ stays).
func foldRunes(rs []rune) []rune {
	out := make([]rune, len(rs))
	for i, r := range rs {
		r = unicode.ToLower(r)
		switch r {
		case 'á':
			r = 'a'
		case 'é':
			r = 'e'
		case 'í':
			r = 'i'
		case 'ó':
			r = 'o'
		case 'ú', 'ü':
			r = 'u'
		}
		out[i] = r
	}
	return out
}

// leetReading is the content with l33t digits and signs read as letters.
type leetReading struct {
	runes []rune
	from  []rune // the content it was read from
}

// changed reports whether the reading differs from the content in [i, end).
func (v leetReading) changed(i, end int) bool {
	return !slices.Equal(v.runes[i:end], v.from[i:end])
}

// leetReadings returns lower as it is and read as l33t, with 1 as i and as l.
func leetReadings(lower []rune) []leetReading {
	read := func(one rune) leetReading {
		out := slices.Clone(lower)
		for i, r := range out {
			switch r {
			case '0':
				out[i] = 'o'
			case '1', '!':
				out[i] = one
			case '3':
				out[i] = 'e'
			case '4', '@':
				out[i] = 'a'
			case '5', '$':
				out[i] = 's'
			case '7':
				out[i] = 't'
			case '8':
				out[i] = 'b'
			}
		}
		return leetReading{runes: out, from: lower}
	}
	return []leetReading{{runes: lower, from: lower}, read('i'), read('l')}
}

// keyboardRows are the rows of Spanish, US, French and German keyboards,
// each way.
var keyboardRows = func() []string {
	rows := []string{"1234567890", "qwertyuiop", "asdfghjklñ", "zxcvbnm", "qwertzuiop", "yxcvbnm", "azertyuiop", "wxcvbn"}
	for _, row := range slices.Clone(rows) {
		r := []rune(row)
		slices.Reverse(r)
		rows = append(rows, string(r))
	}
	return rows
}()

// onKeyboard reports whether s runs along a keyboard row.
func onKeyboard(s string) bool {
	return slices.ContainsFunc(keyboardRows, func(row string) bool { return strings.Contains(row, s) })
}

//go:embed lantoken_words.txt
var wordsFile []byte

// words is lantoken_words.txt; maxWordLen its longest word, in characters.
var words, maxWordLen = func() (map[string]bool, int) {
	m, longest := map[string]bool{}, 0
	sc := bufio.NewScanner(bytes.NewReader(wordsFile))
	for sc.Scan() {
		if w := strings.TrimSpace(sc.Text()); w != "" && !strings.HasPrefix(w, "#") {
			m[w] = true
			longest = max(longest, utf8.RuneCountInString(w))
		}
	}
	return m, longest
}()

// exampleTokens are the tokens the documentation and the default config.yaml
// show (and the one older versions showed): refused whatever their strength,
// and known strings inside a longer token. The default config.yaml's are read
// from it, so that the example shown is always the one refused.
var exampleTokens = func() []string {
	list := []string{"token-largo-de-la-caja-2"}
	for _, m := range regexp.MustCompile(`tokens:\s*\[([^\]]*)\]`).FindAllSubmatch(defaultYAML, -1) {
		for item := range strings.SplitSeq(string(m[1]), ",") {
			if tok := strings.Trim(strings.TrimSpace(item), `"'`); tok != "" && !slices.Contains(list, tok) {
				list = append(list, tok)
			}
		}
	}
	return list
}()

// isExampleToken reports whether tok is one of exampleTokens, in any case.
func isExampleToken(tok string) bool {
	return slices.ContainsFunc(exampleTokens, func(e string) bool { return strings.EqualFold(e, tok) })
}

// knownStrings are the strings rateToken charges as known: the content of
// every example token, and known's words of four characters or more, folded
// as the token's content is.
func knownStrings(known []string) []string {
	var out []string
	for _, e := range exampleTokens {
		out = append(out, string(foldRunes(tokenContent(e))))
	}
	for _, k := range known {
		for w := range strings.FieldsFuncSeq(k, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			if utf8.RuneCountInString(w) >= 4 {
				out = append(out, string(foldRunes([]rune(w))))
			}
		}
	}
	return out
}

// profileWords are the data of profile name an attacker knows or can find
// about the shop: what a LAN token must not be built from.
func profileWords(name string, p Profile) []string {
	c := p.Company
	out := []string{name, c.RUC, c.RazonSocial, c.NombreComercial, c.Sucursal, c.DomicilioFiscal, c.Ciudad,
		c.Departamento, c.Correo, c.WebURL, p.IssuingPoint.CodigoTerminal, p.Listen}
	out = append(out, c.Telefonos...)
	return append(out, p.LAN.AllowedHosts...)
}
