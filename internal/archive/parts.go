package archive

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// manifest reads a day's manifest; a day never archived has an empty one.
func (j *Job) manifest(ctx context.Context, day time.Time) (Manifest, error) {
	return readManifest(ctx, j.Bucket, j.Prefix, day, j.IsNotFound)
}

func readManifest(ctx context.Context, b Bucket, prefix string, day time.Time, notFound func(error) bool) (Manifest, error) {
	m := Manifest{Day: day.Format(time.DateOnly)}
	raw, err := b.Get(ctx, manifestKey(prefix, day))
	if err != nil {
		if errors.Is(err, ErrNotFound) || (notFound != nil && notFound(err)) {
			return m, nil
		}
		return m, err
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return m, fmt.Errorf("manifest of %s: %w", m.Day, err)
	}
	return m, nil
}

// eachArchived reads every row of a day's parts, checking each part's
// count and quota sum against the manifest.
func eachArchived(ctx context.Context, b Bucket, prefix string, day time.Time, m Manifest, fn func(store.UsageLog) error) error {
	for _, p := range m.Parts {
		raw, err := b.Get(ctx, partKey(prefix, day, p.Name))
		if err != nil {
			return fmt.Errorf("read back %s: %w", p.Name, err)
		}
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			return fmt.Errorf("read back %s: %w", p.Name, err)
		}
		var rows, quota int64
		dec := json.NewDecoder(bufio.NewReader(zr))
		for {
			var l store.UsageLog
			err := dec.Decode(&l)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return fmt.Errorf("read back %s: %w", p.Name, err)
			}
			rows++
			quota += l.Quota
			if err := fn(l); err != nil {
				return err
			}
		}
		if rows != p.Rows || quota != p.Quota {
			return fmt.Errorf("part %s holds %d rows of quota %d, its manifest says %d of %d", p.Name, rows, quota, p.Rows, p.Quota)
		}
	}
	return nil
}

// readBack is the quota of every archived row of the day by id, and checks
// the parts against the manifest's totals.
func (j *Job) readBack(ctx context.Context, day time.Time, m Manifest) (map[int64]int64, error) {
	held := map[int64]int64{}
	var rows, quota int64
	err := eachArchived(ctx, j.Bucket, j.Prefix, day, m, func(l store.UsageLog) error {
		held[l.ID] = l.Quota
		rows++
		quota += l.Quota
		return nil
	})
	if err == nil && (rows != m.Rows || quota != m.Quota) {
		err = fmt.Errorf("the archive holds %d rows of quota %d, the manifest says %d of %d", rows, quota, m.Rows, m.Quota)
	}
	return held, err
}

// partWriter gathers one part's rows, gzipped, in memory.
type partWriter struct {
	buf         bytes.Buffer
	zw          *gzip.Writer
	enc         *json.Encoder
	rows, quota int64
}

func newPart() *partWriter {
	p := &partWriter{}
	p.zw = gzip.NewWriter(&p.buf)
	p.enc = json.NewEncoder(p.zw)
	return p
}

// writeNew archives the day's rows the archive does not hold yet, in parts
// of at most PartRows, then rewrites the manifest.
func (j *Job) writeNew(ctx context.Context, day time.Time, w store.Window, m *Manifest, held map[int64]int64) (int64, error) {
	var part *partWriter
	var total int64
	put := func() error {
		if err := part.zw.Close(); err != nil {
			return err
		}
		name := partName(len(m.Parts) + 1)
		if err := j.Bucket.Put(ctx, partKey(j.Prefix, day, name), part.buf.Bytes()); err != nil {
			return err
		}
		m.Parts = append(m.Parts, Part{Name: name, Rows: part.rows, Quota: part.quota})
		m.Rows += part.rows
		m.Quota += part.quota
		part = nil
		return nil
	}
	err := j.Logs.Each(ctx, store.LogFilter{Since: w.Since, Until: w.Until}, func(l store.UsageLog) error {
		if _, ok := held[l.ID]; ok {
			return nil
		}
		if part == nil {
			part = newPart()
		}
		if err := part.enc.Encode(l); err != nil {
			return err
		}
		part.rows++
		part.quota += l.Quota
		total++
		m.MaxID = max(m.MaxID, l.ID)
		if part.rows >= int64(j.PartRows) {
			return put()
		}
		return nil
	})
	if err == nil && part != nil {
		err = put()
	}
	if err != nil || total == 0 {
		return total, err
	}
	raw, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return total, err
	}
	return total, j.Bucket.Put(ctx, manifestKey(j.Prefix, day), raw)
}

// check holds the deletion unless every row of the day up to the
// manifest's last id is in the archive with the same quota.
func (j *Job) check(ctx context.Context, w store.Window, m Manifest, held map[int64]int64) error {
	return j.Logs.Each(ctx, store.LogFilter{Since: w.Since, Until: w.Until}, func(l store.UsageLog) error {
		if l.ID > m.MaxID {
			return nil
		}
		q, ok := held[l.ID]
		if !ok || q != l.Quota {
			return fmt.Errorf("row %d is not in the archive as it is in the database; nothing of the day is deleted", l.ID)
		}
		return nil
	})
}
