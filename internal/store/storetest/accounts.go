package storetest

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

var identityTests = []namedTest{
	{"an identity links to one user and unlinks", func(t *testing.T, s store.Store) {
		ids := s.Identities()
		at := time.Unix(time.Now().Unix(), 0).UTC()
		must(t, ids.Link(ctx(t), store.Identity{Issuer: "https://idp", Subject: "sub-1", UserID: 9, LinkedAt: at}), "link")
		if uid, err := ids.User(ctx(t), "https://idp", "sub-1"); err != nil || uid != 9 {
			t.Fatalf("User = %d %v", uid, err)
		}
		got, err := ids.Of(ctx(t), "https://idp", 9)
		if err != nil || got.Subject != "sub-1" || !got.LinkedAt.Equal(at) {
			t.Fatalf("Of = %+v %v", got, err)
		}
		wantErr(t, ids.Link(ctx(t), store.Identity{Issuer: "https://idp", Subject: "sub-1", UserID: 10}), store.ErrConflict, "a second user for the identity")
		// The same subject at another issuer is another identity.
		must(t, ids.Link(ctx(t), store.Identity{Issuer: "https://other", Subject: "sub-1", UserID: 10}), "link at another issuer")
		_, err = ids.User(ctx(t), "https://idp", "sub-2")
		wantErr(t, err, store.ErrNotFound, "an unknown identity")
		if ok, err := ids.Unlink(ctx(t), "https://idp", 9); !ok || err != nil {
			t.Fatalf("Unlink = %v %v", ok, err)
		}
		if ok, err := ids.Unlink(ctx(t), "https://idp", 9); ok || err != nil {
			t.Fatalf("second Unlink = %v %v", ok, err)
		}
		_, err = ids.Of(ctx(t), "https://idp", 9)
		wantErr(t, err, store.ErrNotFound, "identity after unlink")
		if uid, err := ids.User(ctx(t), "https://other", "sub-1"); err != nil || uid != 10 {
			t.Fatalf("the other issuer's link was touched: %d %v", uid, err)
		}
	}},
}

var totpTests = []namedTest{
	{"a second factor is pending, then enabled with recovery codes, then removed", func(t *testing.T, s store.Store) {
		r := s.TOTP()
		_, err := r.Get(ctx(t), 7)
		wantErr(t, err, store.ErrNotFound, "no second factor yet")
		must(t, r.Begin(ctx(t), 7, "sealed-1", time.Now()), "begin")
		must(t, r.Begin(ctx(t), 7, "sealed-2", time.Now()), "begin again replaces the pending secret")
		if got, err := r.Get(ctx(t), 7); err != nil || got.Secret != "sealed-2" || got.Enabled || got.LastStep != 0 {
			t.Fatalf("pending = %+v %v", got, err)
		}
		if ok, err := r.SpendStep(ctx(t), 7, 100); ok || err != nil {
			t.Fatalf("a pending factor spent a step: %v %v", ok, err)
		}
		if ok, err := r.Enable(ctx(t), 7, []string{"h1", "h2", "h3"}, time.Now()); !ok || err != nil {
			t.Fatalf("Enable = %v %v", ok, err)
		}
		if ok, err := r.Enable(ctx(t), 7, []string{"h4"}, time.Now()); ok || err != nil {
			t.Fatalf("a second Enable = %v %v", ok, err)
		}
		wantErr(t, r.Begin(ctx(t), 7, "sealed-3", time.Now()), store.ErrConflict, "begin over an enabled factor")
		if got, _ := r.Get(ctx(t), 7); got.Secret != "sealed-2" || !got.Enabled {
			t.Fatalf("enabled = %+v", got)
		}
		if n, err := r.RecoveryLeft(ctx(t), 7); n != 3 || err != nil {
			t.Fatalf("RecoveryLeft = %d %v", n, err)
		}
		if ok, err := r.SpendRecovery(ctx(t), 7, "h2", time.Now()); !ok || err != nil {
			t.Fatalf("SpendRecovery = %v %v", ok, err)
		}
		if ok, _ := r.SpendRecovery(ctx(t), 7, "h2", time.Now()); ok {
			t.Fatal("a recovery code was spent twice")
		}
		if ok, _ := r.SpendRecovery(ctx(t), 8, "h1", time.Now()); ok {
			t.Fatal("another user spent user 7's recovery code")
		}
		if n, _ := r.RecoveryLeft(ctx(t), 7); n != 2 {
			t.Fatalf("RecoveryLeft after spending = %d", n)
		}
		if ok, _ := r.SpendStep(ctx(t), 7, 100); !ok {
			t.Fatal("a fresh step was refused")
		}
		for _, step := range []int64{100, 99} {
			if ok, _ := r.SpendStep(ctx(t), 7, step); ok {
				t.Fatalf("step %d signed in after step 100", step)
			}
		}
		must(t, r.Delete(ctx(t), 7), "delete")
		_, err = r.Get(ctx(t), 7)
		wantErr(t, err, store.ErrNotFound, "second factor after delete")
		if n, _ := r.RecoveryLeft(ctx(t), 7); n != 0 {
			t.Fatalf("%d recovery codes survived the delete", n)
		}
	}},
}

var redemptionTests = []namedTest{
	{"codes are created in one batch and claimed once", func(t *testing.T, s store.Store) {
		r := s.Redemptions()
		past := time.Now().Add(-time.Hour).UTC().Truncate(time.Second)
		codes := []*store.Redemption{
			{Name: "batch", CodeHash: "hash-a", CodeHint: "tpr-aaaa…", Quota: 500, CreatedBy: 1},
			{Name: "batch", CodeHash: "hash-b", CodeHint: "tpr-bbbb…", Quota: 500, CreatedBy: 1},
			{Name: "old", CodeHash: "hash-c", CodeHint: "tpr-cccc…", Quota: 5, CreatedBy: 1, ExpiresAt: &past},
		}
		must(t, r.Create(ctx(t), codes), "create")
		if codes[0].ID <= 0 || codes[1].ID == codes[0].ID || codes[2].ID == codes[1].ID {
			t.Fatalf("ids %d %d %d", codes[0].ID, codes[1].ID, codes[2].ID)
		}
		wantErr(t, r.Create(ctx(t), []*store.Redemption{{Name: "dup", CodeHash: "hash-a", CodeHint: "x", Quota: 1, CreatedBy: 1}}),
			store.ErrConflict, "a second code with the same hash")
		now := time.Now()
		got, err := r.Claim(ctx(t), "hash-a", 42, now)
		if err != nil || got.ID != codes[0].ID || got.Quota != 500 || got.UsedBy == nil || *got.UsedBy != 42 {
			t.Fatalf("Claim = %+v %v", got, err)
		}
		_, err = r.Claim(ctx(t), "hash-a", 43, now)
		wantErr(t, err, store.ErrNotFound, "a used code")
		_, err = r.Claim(ctx(t), "hash-c", 43, now)
		wantErr(t, err, store.ErrNotFound, "an expired code")
		_, err = r.Claim(ctx(t), "hash-zzz", 43, now)
		wantErr(t, err, store.ErrNotFound, "an unknown code")
		must(t, r.Release(ctx(t), codes[0].ID, 43), "release by someone else")
		_, err = r.Claim(ctx(t), "hash-a", 43, now)
		wantErr(t, err, store.ErrNotFound, "a code released by a user who did not hold it")
		must(t, r.Release(ctx(t), codes[0].ID, 42), "release")
		if got, err := r.Claim(ctx(t), "hash-a", 43, now); err != nil || *got.UsedBy != 43 {
			t.Fatalf("claim after release: %+v %v", got, err)
		}
		list, total, err := r.List(ctx(t), store.Page{Page: 1, PageSize: 2})
		must(t, err, "list")
		if total != 3 || len(list) != 2 || list[0].Name != "old" || list[0].ExpiresAt == nil || !list[0].ExpiresAt.Equal(past) ||
			list[1].CodeHint != "tpr-bbbb…" || list[1].UsedBy != nil {
			t.Fatalf("List = %d %+v", total, list)
		}
	}},
	{"racing claims of one code: exactly one wins", func(t *testing.T, s store.Store) {
		must(t, s.Redemptions().Create(ctx(t), []*store.Redemption{{Name: "r", CodeHash: "hash-race", CodeHint: "h", Quota: 9, CreatedBy: 1}}), "create")
		var wg sync.WaitGroup
		var mu sync.Mutex
		won := 0
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := s.Redemptions().Claim(ctx(t), "hash-race", int64(100+i), time.Now())
				mu.Lock()
				defer mu.Unlock()
				if err == nil {
					won++
				} else if !errors.Is(err, store.ErrNotFound) {
					t.Errorf("Claim: %v", err)
				}
			}()
		}
		wg.Wait()
		if won != 1 {
			t.Fatalf("%d claims won", won)
		}
	}},
}

var auditTests = []namedTest{
	{"audit entries are kept, clipped and filtered", func(t *testing.T, s store.Store) {
		a := s.Audit()
		base := time.Now().Add(-time.Minute)
		long := strings.Repeat("é", 300)
		entries := []store.AuditEntry{
			{CreatedAt: base, UserID: 1, Username: "root", Role: "root", Method: "POST", Path: "/api/users", Target: "5", Status: 200, Outcome: "success", ClientIP: "10.0.0.1"},
			{CreatedAt: base.Add(time.Second), UserID: 2, Username: "ada", Role: "user", Method: "POST", Path: "/api/user_x", Status: 403, Outcome: "denied"},
			{CreatedAt: base.Add(2 * time.Second), UserID: 1, Username: "root", Role: "root", Method: "DELETE", Path: "/api/tokens/3", Target: long, Status: 200, Outcome: "success", RequestID: "req-1"},
		}
		for _, e := range entries {
			must(t, a.Insert(ctx(t), e), "insert")
		}
		all, total, err := a.List(ctx(t), store.AuditFilter{}, store.Page{Page: 1, PageSize: 10})
		must(t, err, "list")
		if total != 3 || all[0].Path != "/api/tokens/3" || all[0].RequestID != "req-1" || all[2].ClientIP != "10.0.0.1" || all[2].TargetID != "5" {
			t.Fatalf("List = %d %+v", total, all)
		}
		if n := len(all[0].Target); n > 200 || n < 190 || !strings.HasPrefix(long, all[0].Target) {
			t.Fatalf("a long target kept %d bytes, or was cut inside a character", n)
		}
		checkUTC(t, "CreatedAt", all[0].CreatedAt)
		cases := []struct {
			name string
			f    store.AuditFilter
			want []string
		}{
			{"by user", store.AuditFilter{UserID: 1}, []string{"/api/tokens/3", "/api/users"}},
			{"by name", store.AuditFilter{Username: "ada"}, []string{"/api/user_x"}},
			{"by method in any case", store.AuditFilter{Method: "delete"}, []string{"/api/tokens/3"}},
			{"by a path prefix with a LIKE wildcard in it", store.AuditFilter{PathPrefix: "/api/user_"}, []string{"/api/user_x"}},
			{"since", store.AuditFilter{Since: base.Add(time.Second)}, []string{"/api/tokens/3", "/api/user_x"}},
			{"until", store.AuditFilter{Until: base.Add(time.Second)}, []string{"/api/users"}},
		}
		for _, tc := range cases {
			got, n, err := a.List(ctx(t), tc.f, store.Page{Page: 1, PageSize: 10})
			must(t, err, tc.name)
			var paths []string
			for _, e := range got {
				paths = append(paths, e.Path)
			}
			if n != len(tc.want) || strings.Join(paths, " ") != strings.Join(tc.want, " ") {
				t.Errorf("%s: %d %v, want %v", tc.name, n, paths, tc.want)
			}
		}
	}},
}
