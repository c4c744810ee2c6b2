package tokenize

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"hash/maphash"
	"strconv"
)

// rankTable holds one encoding's mergeable tokens in about 12 bytes per
// token: every token's bytes back to back in rank order (the rank files are
// dense, 0..n-1), the offset where each rank starts, and an open-addressing
// index from token bytes to rank. A Go map[string]int of the same table costs
// about eight times as much, which is what made the tokenizer the largest
// thing in a long-running gateway's heap.
type rankTable struct {
	blob  []byte   // all tokens, rank order
	start []uint32 // start[r]..start[r+1] is rank r's bytes
	slots []uint32 // 0 empty; else rank+1 in the low rankBits, a hash tag above
	mask  uint64
	seed  maphash.Seed
}

// rankBits leaves 14 bits of each slot for a hash tag, so a probe that lands
// on another token almost never has to compare bytes.
const (
	rankBits = 18
	rankMask = 1<<rankBits - 1
)

// newRankTable parses a .tiktoken rank file ("base64 rank" per line).
func newRankTable(file []byte) (*rankTable, error) {
	lines := bytes.Count(file, []byte{'\n'}) + 1
	t := &rankTable{start: make([]uint32, 0, lines+1), seed: maphash.MakeSeed()}
	t.blob = make([]byte, 0, len(file)/2) // trimmed below
	for len(file) > 0 {
		line := file
		if i := bytes.IndexByte(file, '\n'); i >= 0 {
			line, file = file[:i], file[i+1:]
		} else {
			file = nil
		}
		if len(line) == 0 {
			continue
		}
		sp := bytes.IndexByte(line, ' ')
		if sp < 0 {
			return nil, errors.New("rank line without a space")
		}
		rank, err := strconv.Atoi(string(line[sp+1:]))
		if err != nil || rank != len(t.start) {
			return nil, fmt.Errorf("rank %q out of order at token %d", line[sp+1:], len(t.start))
		}
		t.start = append(t.start, uint32(len(t.blob)))
		n := base64.StdEncoding.DecodedLen(sp)
		t.blob = append(t.blob, make([]byte, n)...)
		m, err := base64.StdEncoding.Decode(t.blob[len(t.blob)-n:], line[:sp])
		if err != nil {
			return nil, err
		}
		t.blob = t.blob[:len(t.blob)-n+m]
	}
	t.start = append(t.start, uint32(len(t.blob)))
	if len(t.start)-1 > rankMask-1 {
		return nil, errors.New("rank table too large for its index")
	}
	t.blob = append([]byte(nil), t.blob...) // drop the over-estimated capacity
	t.start = append([]uint32(nil), t.start...)
	t.index()
	return t, nil
}

// index builds the open-addressing table at a load of at most 0.8.
func (t *rankTable) index() {
	n := len(t.start) - 1
	size := 1
	for size*4 < n*5 {
		size <<= 1
	}
	t.slots = make([]uint32, size)
	t.mask = uint64(size - 1)
	for r := 0; r < n; r++ {
		h := maphash.Bytes(t.seed, t.blob[t.start[r]:t.start[r+1]])
		for i := h & t.mask; ; i = (i + 1) & t.mask {
			if t.slots[i] == 0 {
				t.slots[i] = uint32(r+1) | tag(h)
				break
			}
		}
	}
}

func tag(h uint64) uint32 { return uint32(h>>50) << rankBits }

// rank returns the rank of token s, or -1 when s is not a mergeable token.
func (t *rankTable) rank(s string) int {
	h := maphash.String(t.seed, s)
	want := tag(h)
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		v := t.slots[i]
		if v == 0 {
			return -1
		}
		if v&^rankMask != want {
			continue
		}
		r := int(v&rankMask) - 1
		if string(t.blob[t.start[r]:t.start[r+1]]) == s {
			return r
		}
	}
}

// memory is the heap the table holds, for tests and reports.
func (t *rankTable) memory() int {
	return cap(t.blob) + 4*cap(t.start) + 4*cap(t.slots)
}
