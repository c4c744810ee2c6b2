package tokenize

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"strconv"
)

// rankTable holds one encoding's mergeable tokens in about 13.5 bytes per
// token (7 of them the token's own bytes), in one block of memory: where
// every sixteenth rank's bytes start (4 bytes), each rank's length (1 byte:
// no token is longer than 128), an open-addressing index from token bytes to rank (4 bytes a slot), then every
// token's bytes back to back in rank order (the rank files are dense,
// 0..n-1). A rank's start is its group's start plus the lengths before it in
// the group, at most 15 byte additions, paid only when a probe's hash tag
// matches; a 4-byte start per rank cost 0.55 MB more for o200k. A Go
// map[string]int of the same table costs about eight times as much.
//
// The block is allocated outside the Go heap where the platform allows
// (tableMemory). The o200k table is 2.7 MB that lives as long as the
// process and holds no pointer; on the heap it was the largest live object
// of a serving gateway, and with GOGC at 100 every live byte also buys a byte
// of garbage headroom, so it cost twice its size in resident memory and was
// marked on every collection.
type rankTable struct {
	mem   []byte // group starts, lengths, slots, then blob; read-only once built
	n     int    // ranks
	lens  int    // offset of the lengths in mem
	slots int    // offset of the index in mem
	blob  int    // offset of the token bytes in mem
	mask  uint64
	seed  maphash.Seed
}

// rankBits leaves 14 bits of each slot for a hash tag, so a probe that lands
// on another token almost never has to compare bytes.
const (
	rankBits = 18
	rankMask = 1<<rankBits - 1
)

// groupBits sets how many ranks share one recorded start (16), and
// maxTokenLen what a length byte holds.
const (
	groupBits   = 4
	maxTokenLen = 255
)

// newRankTable parses a .tiktoken rank file ("base64 rank" per line), which
// open yields twice: once to size the table, once to fill it, so the file is
// never copied whole and the table is written straight into its block.
func newRankTable(open func() (io.ReadCloser, error)) (*rankTable, error) {
	n, size := 0, 0
	err := eachRank(open, func(rank int, b64 []byte) error {
		if rank != n {
			return fmt.Errorf("rank %d out of order at token %d", rank, n)
		}
		if decodedLen(b64) > maxTokenLen {
			return fmt.Errorf("token %d longer than %d bytes", rank, maxTokenLen)
		}
		n++
		size += decodedLen(b64)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if n > rankMask-1 {
		return nil, errors.New("rank table too large for its index")
	}
	slots := 1
	for slots*4 < n*5 { // a load of at most 0.8
		slots <<= 1
	}
	t := &rankTable{n: n, lens: 4 * (n>>groupBits + 1), mask: uint64(slots - 1), seed: maphash.MakeSeed()}
	t.slots = t.lens + n
	t.blob = t.slots + 4*slots
	if t.mem, err = tableMemory(t, t.blob+size); err != nil {
		return nil, err
	}
	if err := t.fill(open, size); err != nil {
		return nil, err
	}
	t.index()
	return t, sealTable(t.mem)
}

// fill decodes every token into the blob and records its length, and where
// each group of ranks starts.
func (t *rankTable) fill(open func() (io.ReadCloser, error), size int) error {
	at, next := 0, 0
	err := eachRank(open, func(rank int, b64 []byte) error {
		k := decodedLen(b64)
		if rank != next || rank >= t.n || at+k > size || k > maxTokenLen {
			return errChanged
		}
		next++
		if rank&(1<<groupBits-1) == 0 {
			binary.LittleEndian.PutUint32(t.mem[4*(rank>>groupBits):], uint32(at))
		}
		t.mem[t.lens+rank] = byte(k)
		m, err := base64.StdEncoding.Decode(t.mem[t.blob+at:t.blob+at+k], b64)
		at += m
		return err
	})
	if err == nil && (at != size || next != t.n) {
		err = errChanged
	}
	return err
}

var errChanged = errors.New("rank file changed while read")

// decodedLen is the length of padded base64 b64 once decoded.
func decodedLen(b64 []byte) int {
	return base64.StdEncoding.DecodedLen(len(b64)) - bytes.Count(b64[max(0, len(b64)-2):], []byte{'='})
}

// eachRank calls fn with every line's rank and base64 token.
func eachRank(open func() (io.ReadCloser, error), fn func(rank int, b64 []byte) error) error {
	f, err := open()
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 {
			continue
		}
		sp := bytes.IndexByte(line, ' ')
		if sp < 0 {
			return errors.New("rank line without a space")
		}
		rank, err := strconv.Atoi(string(line[sp+1:]))
		if err != nil {
			return fmt.Errorf("rank %q: %w", line[sp+1:], err)
		}
		if err := fn(rank, line[:sp]); err != nil {
			return err
		}
	}
	return sc.Err()
}

// index fills the open-addressing table.
func (t *rankTable) index() {
	for r := 0; r < t.n; r++ {
		h := maphash.Bytes(t.seed, t.token(r))
		for i := h & t.mask; ; i = (i + 1) & t.mask {
			if t.slot(i) == 0 {
				binary.LittleEndian.PutUint32(t.mem[t.slots+4*int(i):], uint32(r+1)|tag(h))
				break
			}
		}
	}
}

func tag(h uint64) uint32 { return uint32(h>>50) << rankBits }

func (t *rankTable) slot(i uint64) uint32 {
	return binary.LittleEndian.Uint32(t.mem[t.slots+4*int(i):])
}

func (t *rankTable) token(r int) []byte {
	from := t.blob + int(binary.LittleEndian.Uint32(t.mem[4*(r>>groupBits):]))
	for _, k := range t.mem[t.lens+r&^(1<<groupBits-1) : t.lens+r] {
		from += int(k)
	}
	return t.mem[from : from+int(t.mem[t.lens+r])]
}

// rank returns the rank of token s, or -1 when s is not a mergeable token.
func (t *rankTable) rank(s string) int {
	h := maphash.String(t.seed, s)
	want := tag(h)
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		v := t.slot(i)
		if v == 0 {
			return -1
		}
		if v&^rankMask != want {
			continue
		}
		r := int(v&rankMask) - 1
		if string(t.token(r)) == s {
			return r
		}
	}
}

// memory is the size of the table's block, for tests and reports.
func (t *rankTable) memory() int { return len(t.mem) }
