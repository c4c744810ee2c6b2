package accounts

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/store/sqlitetest"
	"github.com/turnpike-gw/turnpike/internal/store/sqlstore"
	"github.com/turnpike-gw/turnpike/internal/store/testdb"
)

// TestStoreOnEveryDialect runs the accounts tables' SQL on SQLite, and on
// PostgreSQL and MySQL when TURNPIKE_TEST_POSTGRES / TURNPIKE_TEST_MYSQL
// name a server (each run gets a fresh schema or database).
func TestStoreOnEveryDialect(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { exercise(t, openDialect(t, sqlitetest.DSN(t))) })
	t.Run("postgres", func(t *testing.T) {
		base := os.Getenv("TURNPIKE_TEST_POSTGRES")
		if base == "" {
			t.Skip("TURNPIKE_TEST_POSTGRES is not set")
		}
		exercise(t, openDialect(t, testdb.Postgres(t, base)))
	})
	t.Run("mysql", func(t *testing.T) {
		base := os.Getenv("TURNPIKE_TEST_MYSQL")
		if base == "" {
			t.Skip("TURNPIKE_TEST_MYSQL is not set")
		}
		exercise(t, openDialect(t, testdb.MySQL(t, base)))
	})
}

func openDialect(t *testing.T, dsn string) *Store {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := sqlstore.OpenStore(ctx, dsn)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	return NewStore(st, "dialect-test-secret")
}

func exercise(t *testing.T, s *Store) {
	ctx := t.Context()
	// Redemptions: create, claim once, list masked with states.
	past := time.Now().Add(-time.Hour)
	codes, ids, err := s.CreateRedemptions(ctx, "batch", 500, 2, nil, 1)
	if err != nil || len(ids) != 2 || ids[0] <= 0 || ids[1] == ids[0] {
		t.Fatalf("create: ids %v, %v", ids, err)
	}
	if _, _, err := s.CreateRedemptions(ctx, "old", 5, 1, &past, 1); err != nil {
		t.Fatalf("create expired: %v", err)
	}
	if _, q, err := s.ClaimRedemption(ctx, codes[0], 42); err != nil || q != 500 {
		t.Fatalf("claim: %d %v", q, err)
	}
	if _, _, err := s.ClaimRedemption(ctx, codes[0], 43); err != ErrBadCode {
		t.Fatalf("second claim: %v", err)
	}
	list, total, err := s.ListRedemptions(ctx, store.Page{Page: 1, PageSize: 10})
	if err != nil || total != 3 || list[0].State != StateExpired || list[2].State != StateUsed || *list[2].UsedBy != 42 {
		t.Fatalf("list: %+v %d %v", list, total, err)
	}
	// Two-factor: begin, enable, verify, disable.
	setup, err := s.BeginTOTP(ctx, 7, "u7")
	if err != nil {
		t.Fatalf("begin: %v", err)
	}
	recovery, ok, err := s.EnableTOTP(ctx, 7, mustCode(t, setup.Secret))
	if err != nil || !ok {
		t.Fatalf("enable: %v %v", ok, err)
	}
	if ok, err := s.VerifyTOTP(ctx, 7, recovery[0], true); err != nil || !ok {
		t.Fatalf("recovery: %v %v", ok, err)
	}
	if st, err := s.TOTPStatus(ctx, 7); err != nil || st.RecoveryLeft != RecoveryCodeCount-1 {
		t.Fatalf("status: %+v %v", st, err)
	}
	if err := s.DisableTOTP(ctx, 7); err != nil {
		t.Fatal(err)
	}
	// Identities.
	if err := s.LinkIdentity(ctx, "https://idp", "sub", 9); err != nil {
		t.Fatal(err)
	}
	if id, err := s.IdentityUser(ctx, "https://idp", "sub"); err != nil || id != 9 {
		t.Fatalf("identity: %d %v", id, err)
	}
	if err := s.LinkIdentity(ctx, "https://idp", "sub", 10); err == nil {
		t.Fatal("an identity was linked twice")
	}
	// Audit: insert and filter.
	for _, p := range []string{"/api/users", "/api/user_x", "/api/tokens/3"} {
		if err := s.InsertAudit(ctx, AuditEntry{CreatedAt: time.Now(), UserID: 1, Username: "root", Role: "root", Method: "POST",
			Path: p, Status: 200, Outcome: OutcomeSuccess}); err != nil {
			t.Fatalf("audit insert: %v", err)
		}
	}
	got, n, err := s.ListAudit(ctx, AuditFilter{PathPrefix: "/api/user_", Method: "post", Since: time.Now().Add(-time.Minute)}, store.Page{Page: 1, PageSize: 10})
	if err != nil || n != 1 || got[0].Path != "/api/user_x" {
		t.Fatalf("audit list: %+v %d %v", got, n, err)
	}
}

func mustCode(t *testing.T, secret string) string {
	c, err := codeAt(secret, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return c
}
