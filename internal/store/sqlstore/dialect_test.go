package sqlstore

import "testing"

func TestRebind(t *testing.T) {
	cases := []struct {
		name    string
		dialect Dialect
		in      string
		want    string
	}{
		{"postgres numbers placeholders in order", Postgres, "SELECT a FROM t WHERE x = ? AND y IN (?, ?)", "SELECT a FROM t WHERE x = $1 AND y IN ($2, $3)"},
		{"postgres leaves quoted question marks", Postgres, "SELECT '?', \"a?\" FROM t WHERE x = ?", "SELECT '?', \"a?\" FROM t WHERE x = $1"},
		{"postgres handles doubled quotes inside strings", Postgres, "SELECT 'it''s ?' WHERE a = ?", "SELECT 'it''s ?' WHERE a = $1"},
		{"postgres without placeholders is unchanged", Postgres, "SELECT 1", "SELECT 1"},
		{"sqlite is unchanged", SQLite, "x = ?", "x = ?"},
		{"mysql is unchanged", MySQL, "x = ?", "x = ?"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Rebind(tc.dialect, tc.in); got != tc.want {
				t.Errorf("Rebind = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestExpand(t *testing.T) {
	const tmpl = "CREATE TABLE t (id {{id}}, n {{bigint}}, s {{string}}, at {{time}}, ok {{bool}}) {{options}}"
	cases := []struct {
		dialect Dialect
		want    string
	}{
		{SQLite, "CREATE TABLE t (id INTEGER PRIMARY KEY AUTOINCREMENT, n INTEGER, s TEXT, at DATETIME, ok BOOLEAN) "},
		{Postgres, "CREATE TABLE t (id BIGSERIAL PRIMARY KEY, n BIGINT, s VARCHAR(255), at TIMESTAMPTZ, ok BOOLEAN) "},
		{MySQL, "CREATE TABLE t (id BIGINT AUTO_INCREMENT PRIMARY KEY, n BIGINT, s VARCHAR(255), at DATETIME(6), ok BOOLEAN) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin"},
	}
	for _, tc := range cases {
		t.Run(string(tc.dialect), func(t *testing.T) {
			if got := Expand(tc.dialect, tmpl); got != tc.want {
				t.Errorf("Expand =\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
	t.Run("unknown placeholder is left for the database to reject", func(t *testing.T) {
		if got := Expand(SQLite, "a {{nope}} b {{int}}"); got != "a {{nope}} b INTEGER" {
			t.Errorf("Expand = %q", got)
		}
	})
}
