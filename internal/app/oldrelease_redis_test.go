package app_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Earlier releases with Redis live balances kept under other keys than
// this one: before the epochs (schema 121, "balance:u:ID") and since them
// (schema 133, "balance:<epoch>:u:ID").
var olderRedisReleases = []struct{ commit, what string }{
	{"84ebd9f", "before the epochs"},
	{"5d7db37", "since the epochs"},
}

// A rolling deploy on Redis: an older release and this one run side by
// side on one migrated database and one Redis, and calls made on either
// node come off one live balance, which both nodes show alike (issue 34:
// the two nodes kept separate balances).
//
// The test flushes the Redis database TURNPIKE_TEST_REDIS names.
func TestAnOlderReleaseAndThisOneShareLiveBalancesOnRedis(t *testing.T) {
	rd := os.Getenv("TURNPIKE_TEST_REDIS")
	if os.Getenv("TURNPIKE_TEST_OLD_RELEASES") == "" || rd == "" {
		t.Skip("set TURNPIKE_TEST_OLD_RELEASES=1 and TURNPIKE_TEST_REDIS to build older releases and roll them on Redis")
	}
	newBin := buildGateway(t)
	for _, rel := range olderRedisReleases {
		t.Run(rel.what, func(t *testing.T) {
			rdb := openRedis(t, rd)
			if err := rdb.FlushDB(context.Background()).Err(); err != nil {
				t.Fatal(err)
			}
			rollOnRedis(t, buildOlderRelease(t, rel.commit), newBin, rd)
		})
	}
}

// sharedBalanceCharge is what one call of delayedUpstream costs at the
// price below (1000 prompt and 500 completion tokens).
const sharedBalanceCharge = 1000

func rollOnRedis(t *testing.T, oldBin, newBin, redisURL string) {
	up := delayedUpstream(t)
	dir := t.TempDir()
	cfg := fmt.Sprintf(`database: "sqlite:%s"
root_token: "upgrade-root-token"
users:
  - {username: alice, password: "alice-pass-123", role: user, quota: 1000000}
tokens:
  - {name: k, user: alice, key: "sk-upgrade-alice", quota: 500000}
channels:
  - {name: up, type: openai, base_url: %q, key: k, models: [m], weight: 1}
models:
  m: {input_per_mtok: 1, output_per_mtok: 2}
`, filepath.Join(dir, "shared.db"), up.URL)
	cfgPath := filepath.Join(dir, "turnpike.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	env := "TURNPIKE_REDIS=" + redisURL
	old := startGateway(t, oldBin, cfgPath, env)
	old.stop(t)
	migrate := exec.Command(newBin, "migrate", "--config", cfgPath)
	migrate.Env = append(os.Environ(), env)
	if out, err := migrate.CombinedOutput(); err != nil {
		t.Fatalf("migrate: %v\n%s", err, out)
	}

	old = startGateway(t, oldBin, cfgPath, env)
	old.showLogOnFailure(t, "older release")
	defer old.stop(t)
	cur := startGateway(t, newBin, cfgPath, env)
	cur.showLogOnFailure(t, "this release")
	defer cur.stop(t)

	nodes := []*gateway{old, cur, cur, old, old, cur}
	for i, n := range nodes {
		sharedBalanceCall(t, n.url, i)
	}
	spent := int64(len(nodes) * sharedBalanceCharge)
	for _, n := range []struct {
		name string
		g    *gateway
	}{{"the older node", old}, {"this release's node", cur}} {
		for path, initial := range map[string]int64{"/api/users/2": 1000000, "/api/tokens/1": 500000} {
			waitForQuota(t, n.name, n.g.url, path, initial-spent)
		}
	}
}

func sharedBalanceCall(t *testing.T, url string, i int) {
	t.Helper()
	body := fmt.Sprintf(`{"model":"m","messages":[{"role":"user","content":"call %d"}]}`, i)
	req, _ := http.NewRequest("POST", url+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer sk-upgrade-alice")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("call %d on %s: %d", i, url, resp.StatusCode)
	}
}

// waitForQuota waits up to 5 s (the older release may settle after it
// answered) for the live balance at path to read want.
func waitForQuota(t *testing.T, node, url, path string, want int64) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, v := rootCall(t, url, "GET", path, "")
		got, _ := v["quota"].(float64)
		if int64(got) == want {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("%s shows %s's balance as %v, want %d (one balance for both nodes)", node, path, v["quota"], want)
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}
