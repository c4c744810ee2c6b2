package contentlog

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"strings"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// Contents in object storage are one gzip JSON object per call, at
// <prefix>/content/YYYY/MM/DD/<ref>.json.gz: a row's content is one GET by
// the ref its row names, and a day's contents sit beside the day the usage
// archive keeps. One object per call costs a PUT per logged call; batching
// a minute into one object would save PUTs but make every read fetch and
// unpack a minute of other calls' contents.

// objectKey places ref's object; ref is valid (validRef).
func objectKey(prefix, ref string) string {
	return path.Join(strings.Trim(prefix, "/"), "content", ref[:4], ref[4:6], ref[6:8], ref+".json.gz")
}

func encodeObject(c store.LogContent) ([]byte, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if err := json.NewEncoder(zw).Encode(c); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func decodeObject(b []byte) (store.LogContent, error) {
	var c store.LogContent
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return c, err
	}
	raw, err := io.ReadAll(io.LimitReader(zr, 8*MaxMaxKB<<10))
	if err != nil {
		return c, err
	}
	return c, json.Unmarshal(raw, &c)
}

func (s *Service) put(ctx context.Context, c store.LogContent) error {
	body, err := encodeObject(c)
	if err != nil {
		return err
	}
	return s.o.Bucket.Put(ctx, objectKey(s.o.Prefix, c.Ref), body)
}

func (s *Service) get(ctx context.Context, ref string) (store.LogContent, error) {
	b, err := s.o.Bucket.Get(ctx, objectKey(s.o.Prefix, ref))
	if err != nil {
		if s.o.IsNotFound != nil && s.o.IsNotFound(err) {
			return store.LogContent{}, ErrNotFound
		}
		return store.LogContent{}, err
	}
	c, err := decodeObject(b)
	if err != nil {
		return c, fmt.Errorf("content %s: %w", ref, err)
	}
	return c, nil
}

// ArchiveWindow moves the contents the database keeps for w to the bucket
// (each written, read back and compared) and deletes them from the
// database, in bounded batches: the usage archive calls it for a day
// before it deletes the day's rows, so contents leave with their rows.
// Without a bucket it does nothing (and nothing is deleted).
func (s *Service) ArchiveWindow(ctx context.Context, w store.Window) (int64, error) {
	if s.o.Bucket == nil {
		return 0, nil
	}
	var moved int64
	err := s.o.Store.Each(ctx, w, func(c store.LogContent) error {
		if err := s.put(ctx, c); err != nil {
			return err
		}
		back, err := s.get(ctx, c.Ref)
		if err != nil {
			return err
		}
		if back.Request != c.Request || back.Answer != c.Answer || back.UserID != c.UserID {
			return fmt.Errorf("content %s read back differs", c.Ref)
		}
		moved++
		return nil
	})
	if err != nil {
		return moved, err
	}
	for {
		n, err := s.o.Store.PruneRange(ctx, w, 1000)
		if err != nil || n < 1000 {
			return moved, err
		}
		select {
		case <-ctx.Done():
			return moved, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}
