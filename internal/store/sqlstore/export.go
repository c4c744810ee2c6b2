package sqlstore

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
)

// snapshotBegin opens a read transaction that sees one instant of the
// database, so an export taken while nodes run is consistent (a ledger
// entry and the balance it moved are both in it or both not). On SQLite a
// deferred transaction is that snapshot in WAL mode and takes no write lock.
var snapshotBegin = map[Dialect]string{
	SQLite:   "BEGIN DEFERRED",
	Postgres: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
	MySQL:    "START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY",
}

// Export writes every record of the database as JSON lines: a header, then
// one line per row, tables in dumpTables order. Without withSecrets the
// secrets (password hashes, key hashes, channel keys, two-factor secrets,
// redemption code hashes, the alert webhook's secret) are left out; such
// an export restores every record, but sign-ins, keys and channels need
// new secrets afterwards.
func (s *Store) Export(ctx context.Context, w io.Writer, withSecrets bool) (DumpCounts, error) {
	return s.ExportWith(ctx, w, DumpOptions{WithSecrets: withSecrets, WithLogs: true})
}

// DumpOptions choose what an export carries and how it reports progress.
type DumpOptions struct {
	WithSecrets bool
	// WithLogs adds the usage rows (turnpike export --with-logs): millions
	// of rows on a busy gateway, so they are left out unless asked for.
	WithLogs bool
	// Progress, when set, hears of every ProgressEvery rows of a table and
	// of the end of a table that reached that many.
	Progress func(table string, rows int, done bool)
}

// ProgressEvery is how many rows of one table a progress line stands for.
const ProgressEvery = 100000

// logTables are the tables only an export with the usage rows carries.
var logTables = map[string]bool{"usage_logs": true, "usage_log_contents": true}

// ExportWith is Export with options.
func (s *Store) ExportWith(ctx context.Context, w io.Writer, o DumpOptions) (DumpCounts, error) {
	withSecrets := o.WithSecrets
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, snapshotBegin[s.dialect]); err != nil {
		return nil, fmt.Errorf("export: begin snapshot: %w", err)
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
	var schema int
	if err := conn.QueryRowContext(ctx, "SELECT COALESCE(MAX(version), 0) FROM schema_migrations").Scan(&schema); err != nil {
		return nil, fmt.Errorf("export: schema version: %w", err)
	}
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	head := dumpHeader{Format: DumpFormat, Dialect: string(s.dialect), Schema: schema,
		CreatedAt: time.Now().UTC().Format(time.RFC3339), WithSecrets: withSecrets}
	if err := enc.Encode(head); err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	counts := DumpCounts{}
	for _, t := range dumpTables {
		if (t.secretRows && !withSecrets) || (logTables[t.name] && !o.WithLogs) {
			continue
		}
		n, err := exportTable(ctx, conn, enc, t, withSecrets, o.Progress)
		if err != nil {
			return nil, fmt.Errorf("export %s: %w", t.name, err)
		}
		counts[t.name] = n
	}
	if err := bw.Flush(); err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	return counts, nil
}

func exportTable(ctx context.Context, conn *sql.Conn, enc *json.Encoder, t dumpTable, withSecrets bool, progress func(string, int, bool)) (int, error) {
	cols, err := tableColumns(ctx, conn, t.name)
	if err != nil {
		return 0, err
	}
	names := make([]string, len(cols))
	order := ""
	for i, c := range cols {
		names[i] = c.name
		if c.name == "id" {
			order = " ORDER BY id"
		}
	}
	rows, err := conn.QueryContext(ctx, "SELECT "+strings.Join(names, ", ")+" FROM "+t.name+order)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	dest := make([]any, len(cols))
	values := make([]func() any, len(cols))
	for i, c := range cols {
		dest[i], values[i] = scanTarget(c.kind)
	}
	n := 0
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return n, err
		}
		row := make(map[string]any, len(cols))
		for i, c := range cols {
			row[c.name] = values[i]()
		}
		if !withSecrets && t.secretRow != nil && t.secretRow(row) {
			continue
		}
		if !withSecrets && t.redact != nil {
			t.redact(row)
		}
		if err := enc.Encode(dumpLine{Table: t.name, Row: row}); err != nil {
			return n, err
		}
		n++
		if progress != nil && n%ProgressEvery == 0 {
			progress(t.name, n, false)
		}
	}
	if progress != nil && n >= ProgressEvery {
		progress(t.name, n, true)
	}
	return n, rows.Err()
}
