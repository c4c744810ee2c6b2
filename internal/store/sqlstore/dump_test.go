package sqlstore

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// A table added by a migration must be exported or skipped on purpose.
func TestEveryTableIsExportedOrSkippedWithAReason(t *testing.T) {
	s := openTest(t, "sqlite:"+filepath.Join(t.TempDir(), "d.db")).(*Store)
	rows, err := s.db.Query("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND sql NOT LIKE 'CREATE VIRTUAL%'")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		rows.Scan(&name)
		exported := slices.ContainsFunc(dumpTables, func(d dumpTable) bool { return d.name == name })
		if _, skipped := dumpSkipped[name]; exported == skipped {
			t.Errorf("table %s: exported %v, skipped %v; want exactly one (dump.go)", name, exported, skipped)
		}
	}
}

// fill writes one or more records into every kind of table a move must keep.
func fill(t *testing.T, s store.Store) (secrets []string) {
	t.Helper()
	ctx := context.Background()
	st := s.(*Store)
	must := func(err error, what string) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	must(s.Groups().Upsert(ctx, store.Group{Name: "vip", Ratio: 0.5}), "group")
	alice := &store.User{Username: "alice", PasswordHash: "$2a$10$alice-password-hash", Role: store.RoleUser, Group: "vip", Status: store.StatusEnabled}
	must(s.Users().Create(ctx, alice), "user")
	exp := time.Date(2031, 1, 2, 3, 4, 5, 123456000, time.UTC)
	tok := &store.Token{UserID: alice.ID, Name: "main", KeyHash: "alice-key-hash", KeyMasked: "sk-al...y", Quota: 700,
		Models: []string{"gpt-4o"}, ExpiresAt: &exp, Status: store.StatusEnabled}
	must(s.Tokens().Create(ctx, tok), "token")
	until := time.Now().Add(time.Hour)
	must(s.Tokens().Rotate(ctx, tok.ID, "alice-rotated-hash", "sk-al...z", &until), "rotate")
	ch := &store.Channel{Name: "up", Type: 1, BaseURL: "http://127.0.0.1:9", Key: "sk-upstream-channel-secret", Models: []string{"gpt-4o"},
		Groups: []string{"vip"}, Priority: 3, Weight: 2, ModelMapping: map[string]string{"gpt-4o": "gpt-4o-2024"}, Settings: map[string]any{"x": "y", "headers": map[string]any{"X-Vendor-Key": "vendor-header-secret"}, "session_token": "aws-session-secret"},
		Status: store.StatusEnabled}
	must(s.Channels().Create(ctx, ch), "channel")
	must(s.Prices().Upsert(ctx, store.ModelPrice{Name: "gpt-4o", InputPerMTok: 2.5, OutputPerMTok: 10, Tiers: []store.PriceTier{{AboveInputTokens: 200000, InputPerMTok: 5}}}), "price")
	must(s.Prices().Upsert(ctx, store.ModelPrice{Name: "free-one", Free: true}), "free price")
	must(s.Ledger().Apply(ctx, []store.LedgerEntry{
		{Key: "topup-1", Kind: store.LedgerTopUp, UserID: alice.ID, Delta: 5000},
		{Key: "call-1", Kind: store.LedgerSettle, UserID: alice.ID, TokenID: tok.ID, Delta: -120, TokenDelta: -120, Used: 120},
	}), "ledger")
	must(s.Logs().Insert(ctx, []store.UsageLog{{Type: store.LogConsume, UserID: alice.ID, TokenID: tok.ID, ChannelID: ch.ID, Model: "gpt-4o",
		PromptTokens: 10, CompletionTokens: 5, Quota: 120, LatencyMS: 42, RequestID: "req-1", Other: json.RawMessage(`{"surface":"chat"}`)}}), "log")
	// More usage rows than one import batch holds, so batches are full,
	// partial and split by a change of table.
	many := make([]store.UsageLog, 2*importBatch+50)
	for i := range many {
		many[i] = store.UsageLog{Type: store.LogConsume, UserID: alice.ID, TokenID: tok.ID, ChannelID: ch.ID, Model: "gpt-4o",
			PromptTokens: i, Quota: int64(i), RequestID: fmt.Sprintf("bulk-%d", i)}
	}
	must(s.Logs().Insert(ctx, many), "many logs")
	must(s.LogContents().Insert(ctx, []store.LogContent{{Ref: "20260308-0123456789abcdef", UserID: alice.ID, Request: `{"q":"é"}`,
		Answer: "a\nb", AnswerTruncated: true, CreatedAt: time.Date(2026, 3, 8, 1, 2, 3, 456000, time.UTC)}}), "log content")
	must(s.Groups().SetLogContent(ctx, "vip", &store.ContentLogging{Enabled: true, MaxKB: 32}), "group log_content")
	must(st.Traffic().PutSetting(ctx, "notify", `{"webhook_url":"http://hook","secret":"whsec-notify-secret"}`), "setting")
	must(st.Traffic().PutLimits(ctx, store.SubjectToken, "1", json.RawMessage(`{"rpm":5}`)), "limits")
	// Seed marks are digests of seed entries that hold raw keys.
	must(st.Traffic().PutSetting(ctx, "seed:token:alice/main", "seed-token-entry-digest"), "seed mark")
	must(st.Traffic().PutSetting(ctx, "notify.seed", "notify-entry-digest"), "notify seed mark")
	return []string{"alice-password-hash", "alice-key-hash", "alice-rotated-hash", "sk-upstream-channel-secret", "whsec-notify-secret",
		"vendor-header-secret", "aws-session-secret", "seed-token-entry-digest", "notify-entry-digest"}
}

func export(t *testing.T, s store.Store, withSecrets bool) []byte {
	t.Helper()
	var buf bytes.Buffer
	if _, err := s.(*Store).Export(context.Background(), &buf, withSecrets); err != nil {
		t.Fatalf("export: %v", err)
	}
	return buf.Bytes()
}

// rowsOf drops the header, which names the dialect and the time, and sorts
// the rows: tables without an id come in each database's own order.
func rowsOf(dump []byte) []string {
	lines := strings.Split(strings.TrimSpace(string(dump)), "\n")[1:]
	slices.Sort(lines)
	return lines
}

// targets are the databases an export is loaded into: a fresh SQLite
// always, and a fresh PostgreSQL schema and MySQL database when the test
// servers are configured.
func targets(t *testing.T) map[string]func(t *testing.T) store.Store {
	out := map[string]func(t *testing.T) store.Store{
		"sqlite": func(t *testing.T) store.Store {
			return openTest(t, "sqlite:"+filepath.Join(t.TempDir(), "target.db"))
		},
	}
	if base := os.Getenv("TURNPIKE_TEST_POSTGRES"); base != "" {
		out["postgres"] = func(t *testing.T) store.Store {
			admin := adminDB(t, "pgx", base)
			schema := "turnpike_import_" + randomSuffix(t)
			execAdmin(t, admin, "CREATE SCHEMA "+schema)
			t.Cleanup(func() { execAdmin(t, admin, "DROP SCHEMA "+schema+" CASCADE") })
			return openTest(t, withQueryParam(base, "search_path", schema))
		}
	}
	if base := os.Getenv("TURNPIKE_TEST_MYSQL"); base != "" {
		out["mysql"] = func(t *testing.T) store.Store {
			cfg, err := mysql.ParseDSN(strings.TrimPrefix(base, "mysql://"))
			if err != nil {
				t.Fatal(err)
			}
			admin := adminDB(t, "mysql", cfg.FormatDSN())
			db := "turnpike_import_" + randomSuffix(t)
			execAdmin(t, admin, "CREATE DATABASE "+db+" CHARACTER SET utf8mb4")
			t.Cleanup(func() { execAdmin(t, admin, "DROP DATABASE "+db) })
			c := cfg.Clone()
			c.DBName = db
			return openTest(t, "mysql://"+c.FormatDSN())
		}
	}
	return out
}

func TestAnExportFromSQLiteLoadsIntoEachDatabaseWithEveryRowAndId(t *testing.T) {
	src := openTest(t, "sqlite:"+filepath.Join(t.TempDir(), "src.db"))
	fill(t, src)
	dump := export(t, src, true)
	for name, open := range targets(t) {
		t.Run(name, func(t *testing.T) {
			dst := open(t)
			counts, err := dst.(*Store).Import(context.Background(), bytes.NewReader(dump))
			if err != nil {
				t.Fatalf("import: %v", err)
			}
			if counts["users"] != 1 || counts["tokens"] != 1 || counts["quota_ledger"] != 2 || counts["usage_logs"] != 2*importBatch+51 || counts["usage_log_contents"] != 1 {
				t.Errorf("counts = %v", counts)
			}
			// Exporting the target again gives the same rows: every
			// column of every table survived the move, ids included.
			got, want := rowsOf(export(t, dst, true)), rowsOf(dump)
			if len(got) != len(want) {
				t.Errorf("%d rows after the move, want %d", len(got), len(want))
			}
			for i := range min(len(got), len(want)) {
				if got[i] != want[i] {
					t.Errorf("row %d differs after the move\n got: %s\nwant: %s", i, got[i], want[i])
				}
			}
			ctx := context.Background()
			tok, err := dst.Tokens().GetByHash(ctx, "alice-key-hash")
			if err != nil || tok.PrevUntil == nil {
				t.Errorf("the key in its rotation grace did not survive: %+v, %v", tok, err)
			}
			// New rows get fresh ids past the loaded ones (PostgreSQL's
			// sequences were moved).
			bob := &store.User{Username: "bob", PasswordHash: "h", Role: store.RoleUser, Group: "default", Status: store.StatusEnabled}
			if err := dst.Users().Create(ctx, bob); err != nil || bob.ID <= tok.UserID {
				t.Errorf("a user created after the import: id %d, err %v", bob.ID, err)
			}
			if err := dst.Ledger().Apply(ctx, []store.LedgerEntry{{Key: "after", Kind: store.LedgerTopUp, UserID: bob.ID, Delta: 1}}); err != nil {
				t.Errorf("a ledger entry after the import: %v", err)
			}
		})
	}
}

func TestImportRefusesADatabaseThatHoldsRecords(t *testing.T) {
	src := openTest(t, "sqlite:"+filepath.Join(t.TempDir(), "src.db"))
	fill(t, src)
	dump := export(t, src, true)
	dst := openTest(t, "sqlite:"+filepath.Join(t.TempDir(), "dst.db"))
	if err := dst.Groups().Upsert(context.Background(), store.Group{Name: "default", Ratio: 1}); err != nil {
		t.Fatal(err)
	}
	_, err := dst.(*Store).Import(context.Background(), bytes.NewReader(dump))
	if !errors.Is(err, ErrNotEmpty) || !strings.Contains(err.Error(), "user_groups") {
		t.Fatalf("err = %v, want ErrNotEmpty naming user_groups", err)
	}
}

func TestImportOfABrokenFileLeavesTheDatabaseEmpty(t *testing.T) {
	src := openTest(t, "sqlite:"+filepath.Join(t.TempDir(), "src.db"))
	fill(t, src)
	dump := export(t, src, true)
	cases := map[string][]byte{
		"not an export":     []byte(`{"hello":1}` + "\n"),
		"cut in the middle": dump[:len(dump)*2/3],
		"an unknown table":  append(bytes.Clone(dump), []byte(`{"table":"secrets","row":{"id":1}}`+"\n")...),
		"an unknown column": append(bytes.Clone(dump), []byte(`{"table":"user_groups","row":{"name":"x","ratio":1,"colour":"red"}}`+"\n")...),
		"a row the database refuses (a repeated key)": append(bytes.Clone(dump), []byte(`{"table":"user_groups","row":{"name":"vip","ratio":2}}`+"\n")...),
		"a value of the wrong kind":                   append(bytes.Clone(dump), []byte(`{"table":"user_groups","row":{"name":"y","ratio":"high"}}`+"\n")...),
	}
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			dst := openTest(t, "sqlite:"+filepath.Join(t.TempDir(), "dst.db"))
			if _, err := dst.(*Store).Import(context.Background(), bytes.NewReader(data)); err == nil {
				t.Fatal("import succeeded")
			}
			if err := dst.(*Store).checkEmptyNow(); err != nil {
				t.Fatalf("after a failed import: %v", err)
			}
		})
	}
}

func (s *Store) checkEmptyNow() error {
	return s.tryTx(context.Background(), func(tx *sql.Tx) error { return s.checkEmpty(context.Background(), tx) })
}

func TestAnExportWithoutSecretsHoldsNoneAndStillLoads(t *testing.T) {
	src := openTest(t, "sqlite:"+filepath.Join(t.TempDir(), "src.db"))
	secrets := fill(t, src)
	dump := export(t, src, false)
	for _, s := range secrets {
		if bytes.Contains(dump, []byte(s)) {
			t.Errorf("the export without secrets holds %q", s)
		}
	}
	if !bytes.Contains(dump, []byte(`X-Vendor-Key`)) {
		t.Error("the export without secrets lost the names of the channel's headers")
	}
	withSecrets := export(t, src, true)
	for _, s := range secrets {
		if !bytes.Contains(withSecrets, []byte(s)) {
			t.Errorf("the export with secrets lacks %q", s)
		}
	}
	dst := openTest(t, "sqlite:"+filepath.Join(t.TempDir(), "dst.db"))
	if _, err := dst.(*Store).Import(context.Background(), bytes.NewReader(dump)); err != nil {
		t.Fatalf("import: %v", err)
	}
	u, err := dst.Users().GetByUsername(context.Background(), "alice")
	if err != nil || u.Quota != 5000-120 || u.UsedQuota != 120 {
		t.Fatalf("alice after import: %+v, %v", u, err)
	}
}

// Logged contents go with the usage rows: an export without them
// (turnpike export without --with-logs) carries neither.
func TestAnExportWithoutLogsLeavesTheContentsOut(t *testing.T) {
	src := openTest(t, "sqlite:"+filepath.Join(t.TempDir(), "src.db"))
	fill(t, src)
	var buf bytes.Buffer
	counts, err := src.(*Store).ExportWith(context.Background(), &buf, DumpOptions{WithSecrets: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := counts["usage_log_contents"]; ok || bytes.Contains(buf.Bytes(), []byte("0123456789abcdef")) {
		t.Fatalf("contents exported without the logs: %v", counts)
	}
	if _, ok := counts["usage_logs"]; ok {
		t.Fatalf("usage rows exported without --with-logs: %v", counts)
	}
}
