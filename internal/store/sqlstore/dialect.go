package sqlstore

import (
	"strconv"
	"strings"
)

// Dialect names one of the supported SQL databases. Its values are the ones
// store.Store.Dialect reports.
type Dialect string

// The supported dialects.
const (
	SQLite   Dialect = "sqlite"
	Postgres Dialect = "postgres"
	MySQL    Dialect = "mysql"
)

// columnTypes maps the placeholders of a migration template to each dialect's
// column type. MySQL needs bounded VARCHARs wherever a column is indexed, and
// TEXT there is only 64 KiB, so long JSON goes to MEDIUMTEXT. MySQL tables
// use a binary collation so that names compare case-sensitively, as they do
// on SQLite and PostgreSQL; otherwise "GPT-4o" and "gpt-4o" would collide
// on MySQL alone.
var columnTypes = map[Dialect]map[string]string{
	SQLite: {
		"id":      "INTEGER PRIMARY KEY AUTOINCREMENT",
		"bigint":  "INTEGER",
		"int":     "INTEGER",
		"string":  "TEXT",
		"text":    "TEXT",
		"time":    "DATETIME",
		"float":   "REAL",
		"bool":    "BOOLEAN",
		"blob":    "BLOB",
		"options": "",
	},
	Postgres: {
		"id":      "BIGSERIAL PRIMARY KEY",
		"bigint":  "BIGINT",
		"int":     "INTEGER",
		"string":  "VARCHAR(255)",
		"text":    "TEXT",
		"time":    "TIMESTAMPTZ",
		"float":   "DOUBLE PRECISION",
		"bool":    "BOOLEAN",
		"blob":    "BYTEA",
		"options": "",
	},
	MySQL: {
		"id":      "BIGINT AUTO_INCREMENT PRIMARY KEY",
		"bigint":  "BIGINT",
		"int":     "INT",
		"string":  "VARCHAR(255)",
		"text":    "MEDIUMTEXT",
		"time":    "DATETIME(6)",
		"float":   "DOUBLE",
		"bool":    "BOOLEAN",
		"blob":    "LONGBLOB",
		"options": "ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin",
	},
}

// Expand replaces the type placeholders of a migration template with the
// dialect's column types, so one CREATE TABLE serves all three databases:
//
//	{{id}}      auto-increment BIGINT primary key
//	{{bigint}}  64-bit integer        {{int}}    32-bit integer
//	{{string}}  indexable text (255)  {{text}}   long text or JSON
//	{{time}}    UTC timestamp, microsecond precision
//	{{float}}   double               {{bool}}   boolean
//	{{blob}}    binary               {{options}} table options (MySQL engine and charset)
//
// Unknown placeholders are left untouched so a typo fails loudly in the
// database rather than silently.
func Expand(d Dialect, tmpl string) string {
	types := columnTypes[d]
	var b strings.Builder
	for {
		start := strings.Index(tmpl, "{{")
		if start < 0 {
			break
		}
		end := strings.Index(tmpl[start:], "}}")
		if end < 0 {
			break
		}
		name := tmpl[start+2 : start+end]
		typ, ok := types[name]
		if !ok {
			typ = tmpl[start : start+end+2]
		}
		b.WriteString(tmpl[:start])
		b.WriteString(typ)
		tmpl = tmpl[start+end+2:]
	}
	b.WriteString(tmpl)
	return b.String()
}

// Rebind rewrites '?' placeholders as $1, $2, ... for PostgreSQL and returns
// the query unchanged for the other dialects. Question marks inside quoted
// strings or identifiers are kept.
func Rebind(d Dialect, query string) string {
	if d != Postgres || !strings.Contains(query, "?") {
		return query
	}
	var b strings.Builder
	b.Grow(len(query) + 8)
	n := 0
	var quote byte
	for i := 0; i < len(query); i++ {
		c := query[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '?':
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}
