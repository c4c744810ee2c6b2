package sqlstore

import (
	"errors"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
)

// target is a parsed database address: which driver to load, what to hand
// it, and for SQLite the facts that decide the pool shape.
type target struct {
	dialect Dialect
	driver  string // database/sql driver name
	source  string // driver-specific data source name
	dir     string // SQLite: parent directory to create; "" for none
	memory  bool   // SQLite: in-memory database, which lives only as long as its connections
	file    string // SQLite: the database file's path ("" in memory)
}

// sqlitePragmas are applied by the driver on every new connection. WAL lets
// readers proceed while one writer commits; busy_timeout makes a writer wait
// for the lock instead of failing at once; _txlock=immediate takes the write
// lock at BEGIN, so a transaction never has to upgrade a read lock (the
// upgrade fails with SQLITE_BUSY without waiting); temp_store(MEMORY) keeps
// statement journals off disk (every multi-row INSERT of the billing writer
// opens one, and on a temp file each journaled page cost a write system
// call); cache_size(-128) gives each of the pool's connections 128 KiB of
// page cache at rest instead of 2 MiB: the operating system caches the
// file anyway, and what stays in memory costs more than its size. SQLite's
// allocator (modernc.org/memory) puts a 4 KiB page with its header in an
// 8 KiB slot, seven to a 64 KiB block, and keeps up to 4 MiB of freed
// blocks mapped, so the process holds about the peak of all connections'
// caches at once: under load the pool reaches five to eight connections,
// each filled by whichever transactions it ran, and at 512 KiB each that
// peak was 9-11 MiB of the gateway's memory (5-5.2 MiB at 128 KiB), while the
// billing writer's CPU did not measurably depend on the cache at rest
// (docs/PERFORMANCE.md, "Round four, seventh pass: SQLite's memory").
// cache_spill(1024) lets one transaction's dirty pages grow that cache to
// 1,024 pages (4 MiB) before any is written to the WAL ahead of the commit: a billing batch of a few
// hundred calls over many keys dirties more pages than the cache holds (an
// index leaf per user and key in each of the log's indexes), and a
// spilled page went to the WAL before the commit, often again at it, and
// was read back when touched again, a third of the writer's CPU in
// BenchmarkBillingWriteCalls. The cache shrinks back once the commit has
// cleaned its pages, one transaction writes at a time, a larger one (an
// index build, an import) still spills past 4 MiB, and the commit writes
// and syncs as before. The sqlite time format writes sortable UTC text
// that the driver parses back into time.Time.
const sqlitePragmas = "_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)" +
	"&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)&_pragma=temp_store(MEMORY)&_pragma=cache_size(-128)" +
	"&_pragma=cache_spill(1024)" +
	"&_txlock=immediate&_time_format=sqlite"

// parseDSN understands the three address forms of the TURNPIKE_DATABASE
// setting: sqlite:PATH, postgres://… or postgresql://…, and
// mysql://user:pass@tcp(host:port)/db. It never echoes the address in an
// error, because the address may carry a password.
func parseDSN(dsn string) (target, error) {
	switch {
	case strings.HasPrefix(dsn, "sqlite:"):
		return parseSQLite(strings.TrimPrefix(dsn, "sqlite:"))
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		if _, err := pgx.ParseConfig(dsn); err != nil {
			return target{}, errors.New("sqlstore: malformed postgres address")
		}
		return target{dialect: Postgres, driver: "pgx", source: dsn}, nil
	case strings.HasPrefix(dsn, "mysql://"):
		return parseMySQL(strings.TrimPrefix(dsn, "mysql://"))
	}
	return target{}, errors.New("sqlstore: database address must start with sqlite:, postgres://, postgresql:// or mysql://")
}

func parseSQLite(path string) (target, error) {
	if path == "" {
		return target{}, errors.New("sqlstore: sqlite address has no path")
	}
	t := target{dialect: SQLite, driver: "sqlite"}
	file, query, hasQuery := strings.Cut(path, "?")
	isURI := strings.HasPrefix(file, "file:")
	if hasQuery && !isURI {
		// The driver only passes a query string through to SQLite for
		// file: URIs; for a plain path it would be cut off silently.
		return target{}, errors.New("sqlstore: sqlite options need a file: URI")
	}
	name := strings.TrimPrefix(file, "file:")
	t.memory = name == ":memory:" || name == "" || strings.Contains("&"+query+"&", "&mode=memory&")
	if !t.memory {
		if isURI && strings.HasPrefix(name, "//") {
			return target{}, errors.New("sqlstore: sqlite file: URI must not name a host")
		}
		t.dir = filepath.Dir(name)
		t.file = name
	}
	sep := "?"
	if hasQuery {
		sep = "&"
	}
	t.source = path + sep + sqlitePragmas
	return t, nil
}

func parseMySQL(rest string) (target, error) {
	cfg, err := mysql.ParseDSN(rest)
	if err != nil {
		return target{}, errors.New("sqlstore: malformed mysql address")
	}
	if cfg.DBName == "" {
		return target{}, errors.New("sqlstore: mysql address names no database")
	}
	cfg.ParseTime = true
	cfg.Loc = time.UTC
	// Migrations are multi-statement scripts.
	cfg.MultiStatements = true
	// Report matched rather than changed rows, so an update that writes the
	// values already stored is not mistaken for a missing row.
	cfg.ClientFoundRows = true
	if cfg.Collation == "" || !strings.HasPrefix(cfg.Collation, "utf8mb4") {
		cfg.Collation = "utf8mb4_unicode_ci"
	}
	if cfg.Params == nil {
		cfg.Params = map[string]string{}
	}
	// Session time zone UTC, so NOW() and DATETIME values agree with Go.
	cfg.Params["time_zone"] = "'+00:00'"
	return target{dialect: MySQL, driver: "mysql", source: cfg.FormatDSN()}, nil
}
