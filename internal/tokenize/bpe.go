package tokenize

import (
	"math"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
)

// encoder counts tokens the way tiktoken does: the encoding's pre-tokenizer
// regex splits text into pieces, a piece that is itself a token counts one,
// and any other piece is merged byte pair by byte pair, lowest rank first.
type encoder struct {
	table *rankTable
	split *regexp2.Regexp
}

// part is one piece boundary during a merge: where it starts and the rank of
// merging it with the next part (math.MaxInt32 when that is no token).
type part struct {
	start int
	rank  int32
}

// count returns the number of tokens text encodes to, special-token markers
// counted as ordinary text.
func (e *encoder) count(text string) int {
	if !utf8.ValidString(text) {
		// regexp2 matches over runes, so an invalid byte is read as U+FFFD;
		// encoding that rune's bytes keeps the counts of the reference.
		text = string([]rune(text))
	}
	n := 0
	var scratch []part
	// regexp2 reports rune offsets; walk byte and rune cursors together,
	// since matches come in order.
	runeAt, byteAt := 0, 0
	toByte := func(r int) int {
		for runeAt < r {
			_, w := utf8.DecodeRuneInString(text[byteAt:])
			byteAt += w
			runeAt++
		}
		return byteAt
	}
	m, _ := e.split.FindStringMatch(text)
	for m != nil {
		from := toByte(m.Index)
		to := toByte(m.Index + m.Length)
		piece := text[from:to]
		if e.table.rank(piece) >= 0 {
			n++
		} else {
			var k int
			k, scratch = e.mergeCount(piece, scratch)
			n += k
		}
		m, _ = e.split.FindNextMatch(m)
	}
	return n
}

// mergeCount merges piece's bytes pair by pair, always the pair of lowest
// rank and the leftmost of equal ones, until no adjacent pair is a token,
// and returns how many parts remain.
func (e *encoder) mergeCount(piece string, parts []part) (int, []part) {
	if len(piece) < 2 {
		return len(piece), parts
	}
	parts = parts[:0]
	for i := 0; i <= len(piece); i++ {
		parts = append(parts, part{start: i, rank: math.MaxInt32})
	}
	pairRank := func(i, skip int) int32 {
		if i+skip+2 < len(parts) {
			if r := e.table.rank(piece[parts[i].start:parts[i+skip+2].start]); r >= 0 {
				return int32(r)
			}
		}
		return math.MaxInt32
	}
	for i := 0; i < len(parts)-2; i++ {
		parts[i].rank = pairRank(i, 0)
	}
	for len(parts) > 1 {
		best, at := int32(math.MaxInt32), -1
		for i := 0; i < len(parts)-1; i++ {
			if parts[i].rank < best {
				best, at = parts[i].rank, i
			}
		}
		if at < 0 {
			break
		}
		parts[at].rank = pairRank(at, 1)
		if at > 0 {
			parts[at-1].rank = pairRank(at-1, 1)
		}
		parts = append(parts[:at+1], parts[at+2:]...)
	}
	return len(parts) - 1, parts
}
