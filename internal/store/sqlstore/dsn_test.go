package sqlstore

import (
	"strings"
	"testing"
)

func TestParseDSN(t *testing.T) {
	cases := []struct {
		name       string
		dsn        string
		wantErr    bool
		dialect    Dialect
		driver     string
		memory     bool
		dir        string
		sourceHas  []string
		sourceLack []string
	}{
		{name: "relative sqlite path creates its directory", dsn: "sqlite:./data/turnpike.db", dialect: SQLite, driver: "sqlite",
			dir: "data", sourceHas: []string{"./data/turnpike.db?", "journal_mode(WAL)", "busy_timeout(5000)", "foreign_keys(1)", "synchronous(NORMAL)", "temp_store(MEMORY)", "_txlock=immediate"}},
		{name: "absolute sqlite path", dsn: "sqlite:/var/lib/tp/x.db", dialect: SQLite, driver: "sqlite", dir: "/var/lib/tp"},
		{name: "bare file name needs no directory beyond the current one", dsn: "sqlite:x.db", dialect: SQLite, driver: "sqlite", dir: "."},
		{name: "sqlite memory", dsn: "sqlite::memory:", dialect: SQLite, driver: "sqlite", memory: true},
		{name: "shared-cache memory URI keeps its options", dsn: "sqlite:file::memory:?cache=shared", dialect: SQLite, driver: "sqlite", memory: true,
			sourceHas: []string{"file::memory:?cache=shared&_pragma="}},
		{name: "named memory URI", dsn: "sqlite:file:mem1?mode=memory&cache=shared", dialect: SQLite, driver: "sqlite", memory: true},
		{name: "file URI with a path", dsn: "sqlite:file:/tmp/a/b.db?cache=private", dialect: SQLite, driver: "sqlite", dir: "/tmp/a"},
		{name: "empty sqlite path", dsn: "sqlite:", wantErr: true},
		{name: "options on a plain path would be dropped", dsn: "sqlite:x.db?mode=ro", wantErr: true},
		{name: "file URI with a host", dsn: "sqlite:file://host/x.db", wantErr: true},
		{name: "postgres", dsn: "postgres://u:p@127.0.0.1:5432/db?sslmode=disable", dialect: Postgres, driver: "pgx",
			sourceHas: []string{"postgres://u:p@127.0.0.1:5432/db"}},
		{name: "postgresql scheme", dsn: "postgresql://u@localhost/db", dialect: Postgres, driver: "pgx"},
		{name: "malformed postgres", dsn: "postgres://u@host:notaport/db", wantErr: true},
		{name: "mysql gets utc, parse time and multi statements", dsn: "mysql://root:pw@tcp(127.0.0.1:3306)/tp", dialect: MySQL, driver: "mysql",
			sourceHas:  []string{"root:pw@tcp(127.0.0.1:3306)/tp", "parseTime=true", "multiStatements=true", "clientFoundRows=true", "utf8mb4"},
			sourceLack: []string{"mysql://"}},
		{name: "mysql without database", dsn: "mysql://root@tcp(127.0.0.1:3306)/", wantErr: true},
		{name: "malformed mysql", dsn: "mysql://root@tcp(127.0.0.1:3306", wantErr: true},
		{name: "unknown scheme", dsn: "oracle://x", wantErr: true},
		{name: "empty", dsn: "", wantErr: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseDSN(tc.dsn)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("parseDSN(%q) = %+v, want an error", tc.dsn, got)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseDSN(%q): %v", tc.dsn, err)
			}
			if got.dialect != tc.dialect || got.driver != tc.driver || got.memory != tc.memory || got.dir != tc.dir {
				t.Errorf("got %+v", got)
			}
			for _, s := range tc.sourceHas {
				if !strings.Contains(got.source, s) {
					t.Errorf("source %q lacks %q", got.source, s)
				}
			}
			for _, s := range tc.sourceLack {
				if strings.Contains(got.source, s) {
					t.Errorf("source %q contains %q", got.source, s)
				}
			}
		})
	}
}

func TestParseDSNErrorsNeverEchoThePassword(t *testing.T) {
	for _, dsn := range []string{
		"postgres://u:hunter2@host:bad/db",
		"mysql://u:hunter2@tcp(host:3306",
		"mysql://u:hunter2@tcp(host:3306)/",
		"redis://u:hunter2@host",
	} {
		_, err := parseDSN(dsn)
		if err == nil {
			t.Fatalf("parseDSN(%q) succeeded", dsn)
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("error for %q leaks the password: %v", dsn, err)
		}
	}
}

func FuzzParseDSN(f *testing.F) {
	for _, seed := range []string{
		"sqlite:./data/turnpike.db", "sqlite::memory:", "sqlite:file::memory:?cache=shared", "sqlite:file:/x/y.db?mode=rwc",
		"postgres://postgres@127.0.0.1:5432/test?sslmode=disable", "postgresql://u:p@h/db",
		"mysql://root:@tcp(127.0.0.1:3306)/test", "mysql://u:p@unix(/tmp/s)/db?charset=latin1", "sqlite:", "mysql://", "x",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, dsn string) {
		got, err := parseDSN(dsn)
		if err != nil {
			return
		}
		switch got.dialect {
		case SQLite:
			if got.driver != "sqlite" || !strings.Contains(got.source, "_txlock=immediate") {
				t.Fatalf("sqlite target %+v", got)
			}
			if got.memory && got.dir != "" {
				t.Fatalf("memory database with a directory: %+v", got)
			}
		case Postgres:
			if got.driver != "pgx" || got.source != dsn {
				t.Fatalf("postgres target %+v", got)
			}
		case MySQL:
			if got.driver != "mysql" || !strings.Contains(got.source, "parseTime=true") {
				t.Fatalf("mysql target %+v", got)
			}
		default:
			t.Fatalf("unknown dialect in %+v", got)
		}
	})
}
