package sqlstore

import (
	"context"

	"github.com/turnpike-gw/turnpike/internal/store"
)

type fileRepo struct{ s *Store }

// Files returns the uploaded files and the chunks of their bytes.
func (s *Store) Files() store.FileRepo { return fileRepo{s} }

var _ store.FileRepo = fileRepo{}

func (r fileRepo) InsertFile(ctx context.Context, f *store.File) error {
	id, err := r.s.insert(ctx, r.s.db, "INSERT INTO files (public_id, user_id, filename, purpose, size_bytes, created_at) VALUES (?, ?, ?, ?, ?, ?)",
		f.PublicID, f.UserID, f.Filename, f.Purpose, f.Bytes, f.CreatedAt)
	if err != nil {
		return wrap(err, "insert file")
	}
	f.ID = id
	return nil
}

const fileColumns = "id, public_id, user_id, filename, purpose, size_bytes, created_at"

func scanFile(row interface{ Scan(...any) error }) (*store.File, error) {
	var f store.File
	err := row.Scan(&f.ID, &f.PublicID, &f.UserID, &f.Filename, &f.Purpose, &f.Bytes, &f.CreatedAt)
	return &f, err
}

func (r fileRepo) GetFile(ctx context.Context, publicID string) (*store.File, error) {
	f, err := scanFile(r.s.db.QueryRowContext(ctx, r.s.Rebind("SELECT "+fileColumns+" FROM files WHERE public_id = ?"), publicID))
	if err != nil {
		return nil, wrap(err, "file")
	}
	return f, nil
}

func (r fileRepo) ListFiles(ctx context.Context, userID int64, purpose string, limit int) ([]*store.File, error) {
	if limit <= 0 || limit > 10000 {
		limit = 10000
	}
	q, args := "SELECT "+fileColumns+" FROM files WHERE user_id = ?", []any{userID}
	if purpose != "" {
		q, args = q+" AND purpose = ?", append(args, purpose)
	}
	rows, err := r.s.db.QueryContext(ctx, r.s.Rebind(q+" ORDER BY id DESC LIMIT ?"), append(args, limit)...)
	if err != nil {
		return nil, wrap(err, "list files")
	}
	defer rows.Close()
	var out []*store.File
	for rows.Next() {
		f, err := scanFile(rows)
		if err != nil {
			return nil, wrap(err, "scan file")
		}
		out = append(out, f)
	}
	return out, wrap(rows.Err(), "list files")
}

func (r fileRepo) DeleteFile(ctx context.Context, publicID string) error {
	return r.s.execOne(ctx, r.s.db, "file", "DELETE FROM files WHERE public_id = ?", publicID)
}

func (r fileRepo) PutChunk(ctx context.Context, fileID string, seq int, data []byte) error {
	_, err := r.s.db.ExecContext(ctx, r.s.Rebind("INSERT INTO file_chunks (file_id, seq, data) VALUES (?, ?, ?)"), fileID, seq, data)
	return wrap(err, "file chunk")
}

func (r fileRepo) Chunk(ctx context.Context, fileID string, seq int) ([]byte, error) {
	var data []byte
	err := r.s.db.QueryRowContext(ctx, r.s.Rebind("SELECT data FROM file_chunks WHERE file_id = ? AND seq = ?"), fileID, seq).Scan(&data)
	if err != nil {
		return nil, wrap(err, "file chunk")
	}
	return data, nil
}

func (r fileRepo) DeleteChunks(ctx context.Context, fileID string) error {
	_, err := r.s.db.ExecContext(ctx, r.s.Rebind("DELETE FROM file_chunks WHERE file_id = ?"), fileID)
	return wrap(err, "file chunks")
}
