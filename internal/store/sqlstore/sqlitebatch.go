package sqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
	"modernc.org/sqlite"
	"modernc.org/sqlite/vtab"
)

// On SQLite the billing batches reach the database through a virtual
// table that serves rows held in Go. A statement names its batch by a
// handle bound to the table's hidden column, so a whole batch takes one
// prepared statement with one argument (the driver allocates C memory for
// every bound argument), and no value is encoded into text and parsed back
// on the way in, which was a quarter to a third of the writer's time when
// batches travelled as JSON. Strings reach SQLite with their length, so
// every byte arrives, invalid UTF-8 and NUL included, and SQLite needs no
// second path for them.

const (
	batchModuleName = "turnpike_batch"
	batchTableName  = "temp.billing_batch"
	// batchCols is the widest row a batch holds (an hourly rollup
	// bucket); the column after them is the hidden handle.
	batchCols = rollupCols
)

// sqliteTimeLayout is how the driver writes time.Time values with the
// _time_format=sqlite option of sqlitePragmas. The batch table hands times
// over as text, which must be exactly that text so that comparisons and
// parsing agree with rows written through bound arguments.
const sqliteTimeLayout = "2006-01-02 15:04:05.999999999-07:00"

// The statements read the batch in rowid order, which is the batch's
// order and so the order of the usage log ids; the table reports that
// order as given, so SQLite does not sort.
const (
	sqliteLogBatch = "INSERT INTO usage_logs (" + logWriteColumns + ") SELECT %s, NULL, NULL, NULL FROM " + batchTableName +
		" WHERE batch = ? ORDER BY rowid"
	sqliteLedgerBatch = "INSERT INTO quota_ledger (" + ledgerWriteColumns + ") SELECT %s, NULL FROM " + batchTableName +
		" WHERE batch = ? ORDER BY rowid ON CONFLICT (idem_key) DO NOTHING"
	// sqliteLedgerReturning is sqliteLedgerBatch naming the keys it
	// inserted, for a batch known to hold recorded keys (see
	// insertLedgerReturning).
	sqliteLedgerReturning = sqliteLedgerBatch + " RETURNING idem_key"
	// sqliteMoveBatch moves the balances of a table's accounts, given as
	// rows (id, delta, used). It is filled with the table, its quota
	// expression and the table again.
	sqliteMoveBatch = "UPDATE %s SET quota = %s, used_quota = used_quota + m.c2 FROM " + batchTableName +
		" AS m WHERE m.batch = ? AND %s.id = m.c0"
)

// batchColumns selects the first n columns of the batch table.
func batchColumns(n int) string {
	cols := make([]string, n)
	for i := range cols {
		cols[i] = "c" + strconv.Itoa(i)
	}
	return strings.Join(cols, ", ")
}

// batchRows is a batch as the batch table serves it.
type batchRows interface {
	len() int
	// row appends the values of row i to dst[:0].
	row(i int, dst []vtab.Value) []vtab.Value
}

// batches holds the batches being read, by handle. A handle is never
// reused, so a statement can only read the batch it was given.
var (
	batches    sync.Map // int64 → batchRows
	lastHandle atomic.Int64
)

// withBatch makes rows readable under a fresh handle while fn runs.
func withBatch(rows batchRows, fn func(handle int64) error) error {
	h := lastHandle.Add(1)
	batches.Store(h, rows)
	defer batches.Delete(h)
	return fn(h)
}

// execBatch runs stmt, which reads the batch table, on rows within tx.
func execBatch(ctx context.Context, tx *sql.Tx, stmt *sql.Stmt, rows batchRows) error {
	return withBatch(rows, func(h int64) error {
		_, err := tx.StmtContext(ctx, stmt).ExecContext(ctx, h)
		return err
	})
}

type logRows struct {
	logs  []store.UsageLog
	stamp time.Time
}

func (r logRows) len() int { return len(r.logs) }

func (r logRows) row(i int, dst []vtab.Value) []vtab.Value {
	l := &r.logs[i]
	return append(dst[:0], l.Type, l.UserID, l.TokenID, l.ChannelID, l.Model, int64(l.PromptTokens), int64(l.CompletionTokens),
		l.Quota, l.LatencyMS, l.RequestID, rawText(l.Other), sqliteTime(l.CreatedAt, r.stamp), l.TeamID, l.OrgID)
}

type ledgerRows struct {
	entries []store.LedgerEntry
	stamp   time.Time
}

func (r ledgerRows) len() int { return len(r.entries) }

func (r ledgerRows) row(i int, dst []vtab.Value) []vtab.Value {
	e := &r.entries[i]
	return append(dst[:0], e.Key, e.Kind, e.UserID, e.TokenID, e.Delta, e.TokenDelta, e.Used, sqliteTime(e.CreatedAt, r.stamp), e.TeamID)
}

// moveRows are the balance changes of accounts, in the order of ids.
type moveRows struct {
	ids      []int64
	accounts map[int64]*balance
}

func (r moveRows) len() int { return len(r.ids) }

func (r moveRows) row(i int, dst []vtab.Value) []vtab.Value {
	a := r.accounts[r.ids[i]]
	return append(dst[:0], r.ids[i], a.delta, a.used)
}

// sqliteTime is t as the driver would store it, or stamp when t is zero.
func sqliteTime(t, stamp time.Time) string {
	if !t.IsZero() {
		stamp = dbTime(t)
	}
	return stamp.Format(sqliteTimeLayout)
}

// batchModule serves the batch table. The table must be created on every
// connection (see sqliteConnector): a module whose create and connect
// differ is not eponymous.
type batchModule struct{}

func (batchModule) Create(ctx vtab.Context, _ []string) (vtab.Table, error) {
	return batchTable{}, ctx.Declare("CREATE TABLE x(" + batchColumns(batchCols) + ", batch HIDDEN)")
}

func (m batchModule) Connect(ctx vtab.Context, args []string) (vtab.Table, error) {
	return m.Create(ctx, args)
}

type batchTable struct{}

// BestIndex takes the handle as the only argument. A plan without it
// would read no batch, so it is priced out; the low price of a plan with
// it puts the batch table first in a join, where each row finds its
// account by primary key.
func (batchTable) BestIndex(info *vtab.IndexInfo) error {
	info.EstimatedCost = 1e12
	for i, c := range info.Constraints {
		if c.Column == batchCols && c.Op == vtab.OpEQ && c.Usable {
			info.Constraints[i].ArgIndex, info.Constraints[i].Omit = 0, true
			info.EstimatedCost, info.EstimatedRows = 1000, 1000
			info.OrderByConsumed = len(info.OrderBy) == 1 && info.OrderBy[0].Column == -1 && !info.OrderBy[0].Desc
			return nil
		}
	}
	return nil
}

func (batchTable) Open() (vtab.Cursor, error) { return &batchCursor{}, nil }
func (batchTable) Disconnect() error          { return nil }
func (batchTable) Destroy() error             { return nil }

// batchCursor walks one batch; row holds the values of row i.
type batchCursor struct {
	rows batchRows
	i    int
	row  []vtab.Value
}

var errNoBatch = errors.New("billing batch table read without a current batch handle")

func (c *batchCursor) Filter(_ int, _ string, vals []vtab.Value) error {
	if len(vals) != 1 {
		return errNoBatch
	}
	h, _ := vals[0].(int64)
	rows, ok := batches.Load(h)
	if !ok {
		return errNoBatch
	}
	c.rows, c.i = rows.(batchRows), 0
	c.load()
	return nil
}

func (c *batchCursor) load() {
	if !c.Eof() {
		c.row = c.rows.row(c.i, c.row)
	}
}

func (c *batchCursor) Next() error {
	c.i++
	c.load()
	return nil
}

func (c *batchCursor) Eof() bool { return c.rows == nil || c.i >= c.rows.len() }

// Column gives NULL for a column the row does not fill.
func (c *batchCursor) Column(col int) (vtab.Value, error) {
	if col < len(c.row) {
		return c.row[col], nil
	}
	return nil, nil
}

func (c *batchCursor) Rowid() (int64, error) { return int64(c.i), nil }
func (c *batchCursor) Close() error          { return nil }

// sqliteDriver is a driver of the store's own, so that the batch module
// reaches only the store's connections. Modules apply to connections
// opened after their registration, hence registering before the first.
var sqliteDriver = sync.OnceValues(func() (*sqlite.Driver, error) {
	d := &sqlite.Driver{}
	return d, d.RegisterModule(batchModuleName, batchModule{})
})

// sqliteConnector opens the store's SQLite connections, each with its
// batch table: temporary tables live per connection, and the statements
// that read the table can only be prepared where it exists.
type sqliteConnector struct {
	d   *sqlite.Driver
	dsn string
}

func openSQLiteDB(dsn string) (*sql.DB, error) {
	d, err := sqliteDriver()
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(sqliteConnector{d: d, dsn: dsn}), nil
}

func (c sqliteConnector) Connect(ctx context.Context) (driver.Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	conn, err := c.d.Open(c.dsn)
	if err != nil {
		return nil, err
	}
	ex, ok := conn.(driver.ExecerContext)
	if !ok {
		conn.Close()
		return nil, fmt.Errorf("sqlite connection %T cannot execute statements", conn)
	}
	if _, err := ex.ExecContext(ctx, "CREATE VIRTUAL TABLE "+batchTableName+" USING "+batchModuleName, nil); err != nil {
		conn.Close()
		return nil, fmt.Errorf("create billing batch table: %w", err)
	}
	return conn, nil
}

func (c sqliteConnector) Driver() driver.Driver { return c.d }
