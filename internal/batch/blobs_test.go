package batch

import (
	"bytes"
	"context"
	"errors"
	"io"
	"sync"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// chunkRepo keeps chunks in memory and records the largest one written,
// so a test sees how much of a file was ever held at once.
type chunkRepo struct {
	store.FileRepo
	mu      sync.Mutex
	chunks  map[string]map[int][]byte
	largest int
}

func (c *chunkRepo) PutChunk(_ context.Context, id string, seq int, data []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.chunks[id] == nil {
		c.chunks[id] = map[int][]byte{}
	}
	c.chunks[id][seq] = bytes.Clone(data)
	c.largest = max(c.largest, len(data))
	return nil
}

func (c *chunkRepo) Chunk(_ context.Context, id string, seq int) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	d, ok := c.chunks[id][seq]
	if !ok {
		return nil, store.ErrNotFound
	}
	return d, nil
}

func (c *chunkRepo) DeleteChunks(_ context.Context, id string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.chunks, id)
	return nil
}

// patterned is n bytes of a repeating pattern, made as they are read.
type patterned struct{ n, off int }

func (p *patterned) Read(b []byte) (int, error) {
	if p.off >= p.n {
		return 0, io.EOF
	}
	k := min(len(b), p.n-p.off)
	for i := range k {
		b[i] = byte((p.off + i) % 251)
	}
	p.off += k
	return k, nil
}

func TestSQLBlobsStreamAFileThroughChunksOfAtMostAMiB(t *testing.T) {
	tests := []struct {
		name       string
		size       int
		max        int64
		wantChunks int
		wantErr    error
	}{
		{"an empty file has no chunk", 0, 1 << 30, 0, nil},
		{"a file of exactly one chunk", chunkSize, 1 << 30, 1, nil},
		{"a large file is many chunks", 5*chunkSize + 7, 1 << 30, 6, nil},
		{"a file past the limit keeps nothing", 3*chunkSize + 1, 3 * chunkSize, 0, ErrTooLarge},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			repo := &chunkRepo{chunks: map[string]map[int][]byte{}}
			b := SQLBlobs{Repo: repo}
			n, err := b.Put(context.Background(), "file-1", &patterned{n: tc.size}, tc.max)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Put err = %v, want %v", err, tc.wantErr)
			}
			if got := len(repo.chunks["file-1"]); got != tc.wantChunks {
				t.Fatalf("%d chunks kept, want %d", got, tc.wantChunks)
			}
			if repo.largest > chunkSize {
				t.Errorf("a chunk of %d bytes", repo.largest)
			}
			if tc.wantErr != nil {
				return
			}
			if n != int64(tc.size) {
				t.Errorf("Put = %d bytes", n)
			}
			rc, _ := b.Open(context.Background(), "file-1")
			got, err := io.ReadAll(rc)
			want, _ := io.ReadAll(&patterned{n: tc.size})
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("read back %d bytes (%v), want %d", len(got), err, tc.size)
			}
		})
	}
}

func TestReadLineTakesLongLinesAndCRLF(t *testing.T) {
	long := bytes.Repeat([]byte("x"), 200<<10) // past the reader's buffer
	in := append(append([]byte("a\r\n\n  \n"), long...), []byte("\nlast")...)
	var got []string
	err := readLines(bytes.NewReader(in), func(l []byte) error { got = append(got, string(l)); return nil })
	if err != nil || len(got) != 3 || got[0] != "a" || len(got[1]) != len(long) || got[2] != "last" {
		t.Fatalf("lines = %d (%v), first %q", len(got), err, got[0])
	}
}
