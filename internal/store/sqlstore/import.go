package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// ErrNotEmpty is returned by Import for a database that holds records.
var ErrNotEmpty = errors.New("the database already holds records")

// Import loads an export (Export) into this database, which must be empty:
// new, or just migrated. Every row keeps its id, so keys, logs and ledger
// entries keep referring to the same users; on PostgreSQL the id sequences
// are then moved past the loaded ids. It is one transaction: a failed
// import leaves the database empty.
func (s *Store) Import(ctx context.Context, r io.Reader) (DumpCounts, error) {
	return s.ImportWith(ctx, r, nil)
}

// ImportWith is Import telling progress of every ProgressEvery rows of a
// table.
func (s *Store) ImportWith(ctx context.Context, r io.Reader, progress func(table string, rows int, done bool)) (DumpCounts, error) {
	dec := json.NewDecoder(r)
	dec.UseNumber()
	var head dumpHeader
	if err := dec.Decode(&head); err != nil {
		return nil, fmt.Errorf("import: the file does not start with an export header: %w", err)
	}
	if head.Format != DumpFormat {
		return nil, fmt.Errorf("import: the file is not a turnpike export of format %d (it says %d)", DumpFormat, head.Format)
	}
	if latest := migrations()[len(migrations())-1].Version; head.Schema > latest {
		return nil, fmt.Errorf("import: the export's schema (migration %d) is newer than this binary's (%d); import with the version that exported", head.Schema, latest)
	}
	counts := DumpCounts{}
	err := s.tryTx(ctx, func(tx *sql.Tx) error {
		if err := s.checkEmpty(ctx, tx); err != nil {
			return err
		}
		l := &loader{s: s, tx: tx, cols: map[string]map[string]colKind{}, stmts: map[string]*sql.Stmt{}}
		defer l.close()
		for line := 2; ; line++ {
			var d dumpLine
			err := dec.Decode(&d)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return fmt.Errorf("line %d: %w", line, err)
			}
			if err := l.insert(ctx, d, line); err != nil {
				return fmt.Errorf("line %d (%s): %w", line, d.Table, err)
			}
			counts[d.Table]++
			if progress != nil && counts[d.Table]%ProgressEvery == 0 {
				progress(d.Table, counts[d.Table], false)
			}
		}
		if err := l.flush(ctx); err != nil {
			return err
		}
		if err := s.resetSequences(ctx, tx); err != nil {
			return err
		}
		// The rollups are not exported: the backfill rebuilds them from
		// the rows just loaded, and the ledger's are summed here.
		if err := restartRollups(ctx, tx); err != nil {
			return err
		}
		return s.rebuildLedgerRollups(ctx, tx)
	})
	if err != nil {
		return nil, fmt.Errorf("import: %w", err)
	}
	return counts, nil
}

// checkEmpty refuses a database where any exported table has a row.
func (s *Store) checkEmpty(ctx context.Context, tx *sql.Tx) error {
	for _, t := range dumpTables {
		var one int
		err := tx.QueryRowContext(ctx, "SELECT 1 FROM "+t.name+" LIMIT 1").Scan(&one)
		if err == nil {
			return fmt.Errorf("%w (table %s has rows); import loads only into a new or just migrated database", ErrNotEmpty, t.name)
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("check that %s is empty: %w", t.name, err)
		}
	}
	return nil
}

// importBatch is how many rows one INSERT carries: a round trip per row
// made a large usage log slow to move to a database over the network.
const importBatch = 200

// loader inserts rows in batches of one table and column set, with one
// prepared statement per full batch shape.
type loader struct {
	s     *Store
	tx    *sql.Tx
	cols  map[string]map[string]colKind
	stmts map[string]*sql.Stmt

	// The batch being gathered: rows of table with the columns names.
	table    string
	names    []string
	key      string
	args     []any
	rows     int
	lastLine int
}

func (l *loader) close() {
	for _, st := range l.stmts {
		st.Close()
	}
}

func (l *loader) insert(ctx context.Context, d dumpLine, line int) error {
	if !slices.ContainsFunc(dumpTables, func(t dumpTable) bool { return t.name == d.Table }) {
		return fmt.Errorf("table %q is not one an export carries", d.Table)
	}
	kinds, ok := l.cols[d.Table]
	if !ok {
		cols, err := tableColumns(ctx, l.tx, d.Table)
		if err != nil {
			return err
		}
		kinds = map[string]colKind{}
		for _, c := range cols {
			kinds[c.name] = c.kind
		}
		l.cols[d.Table] = kinds
	}
	names := make([]string, 0, len(d.Row))
	for name := range d.Row {
		if _, ok := kinds[name]; !ok {
			return fmt.Errorf("column %q is not in this database's table", name)
		}
		names = append(names, name)
	}
	slices.Sort(names)
	args := make([]any, len(names))
	for i, name := range names {
		v, err := bindValue(kinds[name], d.Row[name])
		if err != nil {
			return fmt.Errorf("column %s: %w", name, err)
		}
		args[i] = v
	}
	key := d.Table + "(" + strings.Join(names, ",") + ")"
	if key != l.key || l.rows == importBatch {
		if err := l.flush(ctx); err != nil {
			return err
		}
		l.table, l.names, l.key = d.Table, names, key
	}
	l.args = append(l.args, args...)
	l.rows++
	l.lastLine = line
	return nil
}

// flush writes the gathered batch.
func (l *loader) flush(ctx context.Context) error {
	if l.rows == 0 {
		return nil
	}
	defer func() { l.args, l.rows = l.args[:0], 0 }()
	tuple := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(l.names)), ", ") + ")"
	query := l.s.Rebind("INSERT INTO " + l.table + " (" + strings.Join(l.names, ", ") + ") VALUES " +
		strings.TrimSuffix(strings.Repeat(tuple+", ", l.rows), ", "))
	var err error
	if l.rows == importBatch {
		st, ok := l.stmts[l.key]
		if !ok {
			if st, err = l.tx.PrepareContext(ctx, query); err != nil {
				return fmt.Errorf("rows of %s up to line %d: %w", l.table, l.lastLine, err)
			}
			l.stmts[l.key] = st
		}
		_, err = st.ExecContext(ctx, l.args...)
	} else {
		_, err = l.tx.ExecContext(ctx, query, l.args...)
	}
	if err != nil {
		return fmt.Errorf("rows of %s up to line %d: %w", l.table, l.lastLine, err)
	}
	return nil
}

// resetSequences moves PostgreSQL's id sequences past the loaded ids; an
// insert with an explicit id does not advance them, so the next created
// row would collide. MySQL and SQLite advance their counters themselves.
func (s *Store) resetSequences(ctx context.Context, tx *sql.Tx) error {
	if s.dialect != Postgres {
		return nil
	}
	for _, t := range dumpTables {
		cols, err := tableColumns(ctx, tx, t.name)
		if err != nil {
			return err
		}
		if !slices.ContainsFunc(cols, func(c column) bool { return c.name == "id" }) {
			continue
		}
		var seq sql.NullString
		if err := tx.QueryRowContext(ctx, "SELECT pg_get_serial_sequence($1, 'id')", t.name).Scan(&seq); err != nil {
			return fmt.Errorf("sequence of %s: %w", t.name, err)
		}
		if !seq.Valid {
			continue
		}
		if _, err := tx.ExecContext(ctx, "SELECT setval($1, (SELECT COALESCE(MAX(id), 0) + 1 FROM "+t.name+"), false)", seq.String); err != nil {
			return fmt.Errorf("move the id sequence of %s: %w", t.name, err)
		}
	}
	return nil
}
