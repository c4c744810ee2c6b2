package batch

import (
	"context"
	"errors"
	"io"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// Blobs keeps the bytes of files. Put streams r in and stops with
// ErrTooLarge past max bytes, having kept nothing; Open streams them out.
type Blobs interface {
	Put(ctx context.Context, id string, r io.Reader, max int64) (int64, error)
	Open(ctx context.Context, id string) (io.ReadCloser, error)
	Delete(ctx context.Context, id string) error
}

// ErrTooLarge is an upload past files.max_mb.
var ErrTooLarge = errors.New("file larger than the gateway accepts")

func tooLarge(max int64) *ir.Error {
	return &ir.Error{Status: 413, Kind: ir.KindRequestTooLarge, Code: "file_too_large", Param: "file",
		Message: "the file is larger than the gateway accepts (" + itoa(max>>20) + " MB)"}
}

// chunkSize is one database row of file bytes: large enough that a 200 MB
// file is 200 rows, small enough for every database's packet limit.
const chunkSize = 1 << 20

// SQLBlobs keeps file bytes in the database in chunks, so that neither an
// upload nor a download holds more than one chunk in memory.
type SQLBlobs struct {
	Repo store.FileRepo
	// Chunk overrides chunkSize (tests).
	Chunk int
}

func (b SQLBlobs) size() int {
	if b.Chunk > 0 {
		return b.Chunk
	}
	return chunkSize
}

func (b SQLBlobs) Put(ctx context.Context, id string, r io.Reader, max int64) (int64, error) {
	buf := make([]byte, b.size())
	var total int64
	for seq := 0; ; seq++ {
		n, err := io.ReadFull(r, buf)
		if n > 0 {
			total += int64(n)
			if total > max {
				_ = b.Delete(context.WithoutCancel(ctx), id)
				return total, ErrTooLarge
			}
			if perr := b.Repo.PutChunk(ctx, id, seq, buf[:n]); perr != nil {
				_ = b.Delete(context.WithoutCancel(ctx), id)
				return total, perr
			}
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return total, nil
		}
		if err != nil {
			_ = b.Delete(context.WithoutCancel(ctx), id)
			return total, err
		}
	}
}

func (b SQLBlobs) Open(ctx context.Context, id string) (io.ReadCloser, error) {
	return &chunkReader{ctx: ctx, repo: b.Repo, id: id}, nil
}

func (b SQLBlobs) Delete(ctx context.Context, id string) error { return b.Repo.DeleteChunks(ctx, id) }

// chunkReader reads a file's chunks one at a time.
type chunkReader struct {
	ctx  context.Context
	repo store.FileRepo
	id   string
	seq  int
	cur  []byte
	done bool
}

func (c *chunkReader) Read(p []byte) (int, error) {
	for len(c.cur) == 0 {
		if c.done {
			return 0, io.EOF
		}
		data, err := c.repo.Chunk(c.ctx, c.id, c.seq)
		if errors.Is(err, store.ErrNotFound) {
			c.done = true
			continue
		}
		if err != nil {
			return 0, err
		}
		c.seq++
		c.cur = data
	}
	n := copy(p, c.cur)
	c.cur = c.cur[n:]
	return n, nil
}

func (c *chunkReader) Close() error { return nil }
