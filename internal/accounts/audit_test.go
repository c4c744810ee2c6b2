package accounts_test

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestAuditRecordsStateChangingCallsWithoutSecrets(t *testing.T) {
	g := startMoney(t)
	since := time.Now().Add(-time.Second).UTC().Format(time.RFC3339)
	created := call(t, g, "POST", "/api/users", map[string]any{"username": "frank", "password": "frank-secret-pw"}, rootToken)
	if created.status != 200 {
		t.Fatalf("create user: %d %s", created.status, created.raw)
	}
	call(t, g, "POST", "/api/auth/login", map[string]string{"username": "dave", "password": "wrong-password"}, "")
	dave := g.Login(t, "dave", "dave-password")
	call(t, g, "POST", "/api/user/redeem", map[string]string{"code": "tpr-nothing"}, "", dave)
	call(t, g, "GET", "/api/users", nil, rootToken) // reads are not audited

	g.Restart() // a graceful stop keeps every entry
	all := call(t, g, "GET", "/api/audit?since="+since, nil, rootToken)
	if all.status != 200 {
		t.Fatalf("audit: %d %s", all.status, all.raw)
	}
	for _, secret := range []string{"frank-secret-pw", "wrong-password", "dave-password", "tpr-nothing", rootToken} {
		if strings.Contains(all.raw, secret) {
			t.Fatalf("the audit log holds %q: %s", secret, all.raw)
		}
	}
	type want struct {
		method, path, username, outcome, target string
		status                                  int
	}
	find := func(w want) {
		t.Helper()
		for _, it := range all.body["items"].([]any) {
			e := it.(map[string]any)
			if e["method"] == w.method && e["path"] == w.path && e["username"] == w.username && e["outcome"] == w.outcome &&
				int(num(e["status"])) == w.status && (w.target == "" || e["target"] == w.target) {
				return
			}
		}
		t.Errorf("no entry like %+v in %s", w, all.raw)
	}
	find(want{"POST", "/api/users", "root", "success", "", 200})
	find(want{"POST", "/api/auth/login", "", "denied", "", 401})
	find(want{"POST", "/api/auth/login", "dave", "success", "", 200})
	find(want{"POST", "/api/user/redeem", "dave", "failure", "", 400})
	if strings.Contains(all.raw, `"GET"`) {
		t.Fatalf("a read was audited: %s", all.raw)
	}

	filters := []struct {
		name, query string
		want        int
	}{
		{"by user", "user=dave", 2},
		{"by method and path prefix", "method=post&path=/api/user", 2},
		{"by path prefix with a wildcard character", "path=/api/user_", 0},
		{"in a range that is over", "until=" + since, 0},
		{"one per page", "page_size=1&page=2", 1},
	}
	for _, f := range filters {
		t.Run(f.name, func(t *testing.T) {
			a := call(t, g, "GET", "/api/audit?"+f.query, nil, rootToken)
			if a.status != 200 || len(a.body["items"].([]any)) != f.want {
				t.Fatalf("%d items, want %d: %s", len(a.body["items"].([]any)), f.want, a.raw)
			}
		})
	}
	if a := call(t, g, "GET", "/api/audit?since=yesterday", nil, rootToken); a.status != http.StatusBadRequest {
		t.Fatalf("bad since: %d", a.status)
	}
	if a := call(t, g, "GET", "/api/audit", nil, "", g.Login(t, "dave", "dave-password")); a.status != http.StatusForbidden {
		t.Fatalf("a user read the audit log: %d", a.status)
	}
}

// Every state-changing call that names or creates a record says which
// (CONTRACT §12): a creation records the new id, not "".
func TestAuditRecordsTheTargetOfCreations(t *testing.T) {
	g := startMoney(t)
	user := call(t, g, "POST", "/api/users", map[string]any{"username": "frank", "password": "frank-secret-pw"}, rootToken)
	token := call(t, g, "POST", "/api/tokens", map[string]any{"name": "k"}, "", g.Login(t, "dave", "dave-password"))
	channel := call(t, g, "POST", "/api/channels", map[string]any{"name": "c", "type": 1, "key": "sk-upstream-secret",
		"base_url": "https://api.example.com", "models": []string{"gpt-4o"}}, rootToken)
	codes := call(t, g, "POST", "/api/redemptions", map[string]any{"quota": 100, "count": 2}, rootToken)
	for _, a := range []answer{user, token, channel, codes} {
		if a.status != 200 {
			t.Fatalf("create: %d %s", a.status, a.raw)
		}
	}
	all := call(t, g, "GET", "/api/audit?method=POST&page_size=100", nil, rootToken)
	targets := map[string]string{}
	for _, it := range all.body["items"].([]any) {
		e := it.(map[string]any)
		if e["status"] == float64(200) {
			targets[e["path"].(string)], _ = e["target_id"].(string)
		}
	}
	for path, a := range map[string]answer{"/api/users": user, "/api/tokens": token, "/api/channels": channel} {
		if want := itoa(num(a.body["id"])); targets[path] != want {
			t.Errorf("%s recorded target_id %q, want the new id %s", path, targets[path], want)
		}
	}
	if ids := strings.Split(targets["/api/redemptions"], ","); len(ids) != 2 || ids[0] == "" || ids[0] == ids[1] {
		t.Errorf("creating two redemption codes recorded target_id %q, want their two ids", targets["/api/redemptions"])
	}
	if targets["/api/auth/login"] == "" {
		t.Errorf("a sign-in records no target (the account): %s", all.raw)
	}
}
