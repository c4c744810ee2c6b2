package taskhttp

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/task"
)

// songVendor is a fake batch-polled vendor: every fetch answers all asked
// ids with the status the round's script gives for each.
type songVendor struct {
	mu      sync.Mutex
	n       int
	fetches [][]string
	round   func(round int, id string) string
}

func newSongVendor(t *testing.T, round func(int, string) string) (*songVendor, *httptest.Server) {
	v := &songVendor{round: round}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v.mu.Lock()
		defer v.mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer "+vendorKey {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		var body struct {
			Prompt string   `json:"prompt"`
			IDs    []string `json:"ids"`
		}
		_ = json.NewDecoder(r.Body).Decode(&body)
		switch r.URL.Path {
		case "/songs":
			v.n++
			fmt.Fprintf(w, `{"data":"song-%d"}`, v.n)
		case "/songs/fetch":
			v.fetches = append(v.fetches, body.IDs)
			items := []map[string]any{}
			for _, id := range body.IDs {
				items = append(items, map[string]any{"id": id, "status": v.round(len(v.fetches), id), "audio": id + ".mp3"})
			}
			_ = json.NewEncoder(w).Encode(map[string]any{"items": items})
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	t.Cleanup(srv.Close)
	return v, srv
}

func TestBatchPluginPollsBothTasksInOneRequestAcrossARestart(t *testing.T) {
	e := newEnv(t, "batch.js")
	v, srv := newSongVendor(t, func(round int, id string) string {
		switch {
		case round == 1:
			return "IN_PROGRESS"
		case id == "song-1":
			return "SUCCESS"
		}
		return "FAILURE"
	})
	e.channel("songs", "bulk", srv.URL, []string{"bulk-song"}, nil)

	code, first := e.postJSON("/bulk/submit", userKey, `{"prompt":"jazz"}`)
	if code != 200 {
		t.Fatalf("json submit: %d %v", code, first)
	}
	code, second := e.do(http.MethodPost, "/bulk/submit", userKey, "application/x-www-form-urlencoded", "prompt=blues")
	if code != 200 {
		t.Fatalf("form submit: %d %v", code, second)
	}
	id1, id2 := first["data"].(string), second["data"].(string)
	if got := e.quota(e.alice); got != 1_000_000-2*10_000 {
		t.Fatalf("quota after two submits = %d, want 980000", got)
	}

	e.tick(1)
	if len(v.fetches) != 1 || len(v.fetches[0]) != 2 {
		t.Fatalf("fetches = %v, want one request naming both upstream ids", v.fetches)
	}
	if e.task(id1).Status != task.StatusInProgress || e.task(id2).Status != task.StatusInProgress {
		t.Fatalf("after one round: %s, %s", e.task(id1).Status, e.task(id2).Status)
	}

	e.restart()
	e.tick(1)
	if s1, s2 := e.task(id1), e.task(id2); s1.Status != task.StatusSuccess || s2.Status != task.StatusFailure ||
		s1.BillingStatus != task.BillingSettled || s2.BillingStatus != task.BillingRefunded {
		t.Fatalf("after restart: %s/%s and %s/%s", s1.Status, s1.BillingStatus, s2.Status, s2.BillingStatus)
	}
	if got := e.quota(e.alice); got != 1_000_000-10_000 {
		t.Errorf("quota = %d, want 990000 (one song charged, one refunded)", got)
	}
	if rs := e.logs(e.alice, store.LogRefund); len(rs) != 1 || rs[0].Quota != 10_000 {
		t.Errorf("refund rows = %+v", rs)
	}

	code, out := e.postJSON("/bulk/fetch", userKey, fmt.Sprintf(`{"ids":[%q,%q,"task_nope"]}`, id1, id2))
	items, _ := out["data"].([]any)
	if code != 200 || len(items) != 2 {
		t.Fatalf("dynamic fetch: %d %v", code, out)
	}
	code, out = e.do(http.MethodGet, "/bulk/fetch/"+id1, userKey, "", "")
	data, _ := out["data"].(map[string]any)
	if code != 200 || data["status"] != task.StatusSuccess {
		t.Fatalf("query route: %d %v", code, out)
	}
	snap, _ := data["data"].(map[string]any)
	if snap["audio"] != "song-1.mp3" {
		t.Errorf("stored data = %v, want the batch item's data", snap)
	}
	code, _ = e.do(http.MethodGet, "/bulk/fetch/"+id1, otherKey, "", "")
	if code != 404 {
		t.Errorf("another user's query = %d, want 404", code)
	}
	code, out = e.do(http.MethodGet, "/v1/tasks?ids="+id2+","+id1, userKey, "", "")
	list, _ := out["data"].([]any)
	if code != 200 || len(list) != 2 || list[0].(map[string]any)["task_id"] != id2 {
		t.Errorf("GET /v1/tasks?ids: %d %v", code, out)
	}
	code, out = e.do(http.MethodGet, "/v1/tasks?ids="+id1, otherKey, "", "")
	if list, _ := out["data"].([]any); code != 200 || len(list) != 0 {
		t.Errorf("another user's list = %d %v, want empty", code, out)
	}
	if !slices.Contains(v.fetches[1], "song-1") {
		t.Errorf("second fetch = %v", v.fetches[1])
	}
}
