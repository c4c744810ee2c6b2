package storetest

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/store"
)

func newTask(t *testing.T, s store.Store, publicID string, userID int64, now int64) *store.Task {
	t.Helper()
	tk := &store.Task{PublicID: publicID, UpstreamID: "up-" + publicID, PluginKey: "acme", PluginVersion: "1.0.0",
		Action: "generate", Model: "acme-v1", Status: "SUBMITTED", UserID: userID, TokenID: 1, ChannelID: 2, Group: "default",
		RetainResult: true, QuotaReserved: 100, BillingKey: "task-" + publicID, BillingStatus: store.TaskBillingHeld,
		NextPollAt: now, SubmittedAt: now, CreatedAt: now, UpdatedAt: now, Deadline: now + 3_600_000,
		UsageFacts: json.RawMessage(`{"seconds":5}`)}
	must(t, s.Tasks().Insert(ctx(t), tk), "insert task "+publicID)
	if tk.ID == 0 {
		t.Fatal("Insert set no id")
	}
	return tk
}

var taskTests = []namedTest{
	{"a task reads back by id and public id, JSON columns included", func(t *testing.T, s store.Store) {
		tk := newTask(t, s, "task_a", 1, 1000)
		got, err := s.Tasks().Get(ctx(t), tk.ID)
		must(t, err, "get")
		byPublic, err := s.Tasks().GetPublic(ctx(t), "task_a")
		must(t, err, "get public")
		if got.PublicID != "task_a" || got.QuotaReserved != 100 || !got.RetainResult || string(got.UsageFacts) != `{"seconds":5}` ||
			got.Data != nil || byPublic.ID != tk.ID {
			t.Fatalf("read back %+v / %+v", got, byPublic)
		}
		_, err = s.Tasks().GetPublic(ctx(t), "task_missing")
		wantErr(t, err, store.ErrNotFound, "get of a missing task")
		many, err := s.Tasks().GetPublicMany(ctx(t), []string{"task_a", "task_missing"})
		if err != nil || len(many) != 1 {
			t.Fatalf("GetPublicMany = %v, %v", many, err)
		}
		dup := &store.Task{PublicID: "task_a"}
		if err := s.Tasks().Insert(ctx(t), dup); err == nil {
			t.Fatal("a second task with the same public id was stored")
		}
	}},
	{"list filters, pages newest first and counts", func(t *testing.T, s store.Store) {
		for i, id := range []string{"t1", "t2", "t3"} {
			newTask(t, s, id, int64(1+i%2), 1000)
		}
		ts, total, err := s.Tasks().List(ctx(t), store.TaskFilter{UserID: 1}, store.Page{Page: 1, PageSize: 1})
		if err != nil || total != 2 || len(ts) != 1 || ts[0].PublicID != "t3" {
			t.Fatalf("List = %v %d %v", ts, total, err)
		}
		if _, total, _ := s.Tasks().List(ctx(t), store.TaskFilter{Platform: "other"}, store.Page{}); total != 0 {
			t.Fatalf("platform filter matched %d", total)
		}
	}},
	{"lease, progress, finish and billing each happen once", func(t *testing.T, s store.Store) {
		tk := newTask(t, s, "t", 1, 1000)
		due, err := s.Tasks().Due(ctx(t), 1000, 10)
		if err != nil || len(due) != 1 {
			t.Fatalf("Due = %v, %v", due, err)
		}
		ok, err := s.Tasks().Lease(ctx(t), tk.ID, "node-a", 1000, 5000)
		if err != nil || !ok {
			t.Fatalf("first lease: %v %v", ok, err)
		}
		if ok, _ := s.Tasks().Lease(ctx(t), tk.ID, "node-b", 2000, 6000); ok {
			t.Fatal("a second node leased a task under a live lease")
		}
		if due, _ := s.Tasks().Due(ctx(t), 2000, 10); len(due) != 0 {
			t.Fatal("a leased task is due")
		}
		tk.Status, tk.Progress, tk.Data = "IN_PROGRESS", "50%", json.RawMessage(`{"p":1}`)
		if ok, err := s.Tasks().Progress(ctx(t), tk, "node-b"); ok || err != nil {
			t.Fatalf("progress by a node without the lease: %v %v", ok, err)
		}
		if ok, err := s.Tasks().Progress(ctx(t), tk, "node-a"); !ok || err != nil {
			t.Fatalf("progress: %v %v", ok, err)
		}
		tk.Status, tk.Data = store.TaskSuccess, nil
		if ok, err := s.Tasks().Finish(ctx(t), tk, false); !ok || err != nil {
			t.Fatalf("finish: %v %v", ok, err)
		}
		if ok, _ := s.Tasks().Finish(ctx(t), tk, false); ok {
			t.Fatal("a task finished twice")
		}
		got, _ := s.Tasks().Get(ctx(t), tk.ID)
		if got.Status != store.TaskSuccess || string(got.Data) != `{"p":1}` || got.Progress != "50%" {
			t.Fatalf("after finish %+v", got)
		}
		if un, _ := s.Tasks().Unbilled(ctx(t), 2000, 10); len(un) != 1 {
			t.Fatalf("Unbilled = %v", un)
		}
		if ok, _ := s.Tasks().MarkBilling(ctx(t), tk.ID, "settled", 80); !ok {
			t.Fatal("MarkBilling did not win")
		}
		if ok, _ := s.Tasks().MarkBilling(ctx(t), tk.ID, "refunded", 0); ok {
			t.Fatal("MarkBilling won twice")
		}
		if un, _ := s.Tasks().Unbilled(ctx(t), 2000, 10); len(un) != 0 {
			t.Fatalf("a billed task is unbilled: %v", un)
		}
		if _, err := s.Tasks().Get(ctx(t), tk.ID+99); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("get of a missing id: %v", err)
		}
	}},
}
