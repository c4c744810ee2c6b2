package storetest

import (
	"bytes"
	"errors"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// filesAndBatches returns the store's file and batch repositories or skips
// the test: they are not part of store.Store.
func filesAndBatches(t *testing.T, s store.Store) (store.FileRepo, store.BatchRepo) {
	t.Helper()
	fb, ok := s.(interface {
		Files() store.FileRepo
		Batches() store.BatchRepo
	})
	if !ok {
		t.Skip("store keeps no files and batches")
	}
	return fb.Files(), fb.Batches()
}

var fileBatchTests = []namedTest{
	{"file chunks round-trip in order and past the last one is not found", func(t *testing.T, s store.Store) {
		files, _ := filesAndBatches(t, s)
		big := bytes.Repeat([]byte{0, 1, 2, 255}, 1<<18) // a MiB, binary
		must(t, files.PutChunk(ctx(t), "file-a", 0, big), "chunk 0")
		must(t, files.PutChunk(ctx(t), "file-a", 1, []byte("tail")), "chunk 1")
		got, err := files.Chunk(ctx(t), "file-a", 0)
		if err != nil || !bytes.Equal(got, big) {
			t.Fatalf("chunk 0: %d bytes, %v", len(got), err)
		}
		if got, err := files.Chunk(ctx(t), "file-a", 1); err != nil || string(got) != "tail" {
			t.Fatalf("chunk 1 = %q, %v", got, err)
		}
		_, err = files.Chunk(ctx(t), "file-a", 2)
		wantErr(t, err, store.ErrNotFound, "chunk past the end")
		must(t, files.DeleteChunks(ctx(t), "file-a"), "delete chunks")
		_, err = files.Chunk(ctx(t), "file-a", 0)
		wantErr(t, err, store.ErrNotFound, "chunk after delete")
	}},
	{"files list per user newest first, by purpose, and delete once", func(t *testing.T, s store.Store) {
		files, _ := filesAndBatches(t, s)
		for i, f := range []store.File{{PublicID: "file-1", UserID: 1, Filename: "a.jsonl", Purpose: "batch", Bytes: 10, CreatedAt: 100},
			{PublicID: "file-2", UserID: 2, Filename: "b.jsonl", Purpose: "batch", Bytes: 20, CreatedAt: 101},
			{PublicID: "file-3", UserID: 1, Filename: "c.txt", Purpose: "assistants", Bytes: 30, CreatedAt: 102}} {
			f := f
			must(t, files.InsertFile(ctx(t), &f), "insert file")
			if f.ID == 0 {
				t.Fatalf("file %d got no id", i)
			}
		}
		got, err := files.ListFiles(ctx(t), 1, "", 0)
		if err != nil || len(got) != 2 || got[0].PublicID != "file-3" || got[1].PublicID != "file-1" {
			t.Fatalf("user 1 files = %+v, %v", got, err)
		}
		got, _ = files.ListFiles(ctx(t), 1, "batch", 0)
		if len(got) != 1 || got[0].Bytes != 10 || got[0].Filename != "a.jsonl" || got[0].CreatedAt != 100 {
			t.Fatalf("user 1 batch files = %+v", got)
		}
		if _, err := files.GetFile(ctx(t), "file-2"); err != nil {
			t.Fatalf("get: %v", err)
		}
		must(t, files.DeleteFile(ctx(t), "file-2"), "delete")
		wantErr(t, files.DeleteFile(ctx(t), "file-2"), store.ErrNotFound, "second delete")
		_, err = files.GetFile(ctx(t), "file-2")
		wantErr(t, err, store.ErrNotFound, "get deleted")
	}},
	{"a batch moves status conditionally and is billed once", func(t *testing.T, s store.Store) {
		_, batches := filesAndBatches(t, s)
		b := &store.Batch{PublicID: "batch_1", Kind: "openai", UserID: 7, TokenID: 8, Group: "default", Endpoint: "/v1/embeddings",
			InputFileID: "file-1", CompletionWindow: "24h", Metadata: []byte(`{"k":"v"}`), Status: store.BatchInProgress,
			Mode: "gateway", Holds: []byte(`[{"model":"m","reserved":5}]`), Total: 3, CreatedAt: 100, ExpiresAt: 200}
		must(t, batches.InsertBatch(ctx(t), b), "insert")
		if ok, err := batches.MoveBatch(ctx(t), b.ID, []string{store.BatchInProgress}, store.BatchCancelling, 150); !ok || err != nil {
			t.Fatalf("cancel: %v %v", ok, err)
		}
		b.Completed = 2
		if ok, err := batches.SaveBatch(ctx(t), b); ok || err != nil {
			t.Fatalf("save under a stale status = %v %v, want false", ok, err)
		}
		b.Status = store.BatchCancelling
		if ok, err := batches.SaveBatch(ctx(t), b); !ok || err != nil {
			t.Fatalf("save = %v %v", ok, err)
		}
		if ok, _ := batches.MoveBatch(ctx(t), b.ID, []string{store.BatchInProgress}, store.BatchCompleted, 160); ok {
			t.Fatal("a batch that is cancelling was completed")
		}
		got, err := batches.GetBatch(ctx(t), "batch_1")
		if err != nil || got.Status != store.BatchCancelling || got.CancellingAt != 150 || got.Completed != 2 ||
			string(got.Metadata) != `{"k":"v"}` || got.Total != 3 || got.ExpiresAt != 200 {
			t.Fatalf("got %+v, %v", got, err)
		}
		if ok, _ := batches.MarkBilled(ctx(t), b.ID, 42); !ok {
			t.Fatal("first MarkBilled lost")
		}
		if ok, _ := batches.MarkBilled(ctx(t), b.ID, 7); ok {
			t.Fatal("second MarkBilled won")
		}
		if got, _ := batches.GetBatch(ctx(t), "batch_1"); !got.Billed || got.Charged != 42 {
			t.Fatalf("billed batch = %+v", got)
		}
		_, err = batches.GetBatch(ctx(t), "batch_x")
		if !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("missing batch: %v", err)
		}
	}},
	{"active batches are the unbilled ones without a live lease", func(t *testing.T, s store.Store) {
		_, batches := filesAndBatches(t, s)
		a := &store.Batch{PublicID: "batch_a", Kind: "openai", UserID: 1, Status: store.BatchInProgress}
		b := &store.Batch{PublicID: "batch_b", Kind: "openai", UserID: 1, Status: store.BatchCompleted, Billed: true}
		must(t, batches.InsertBatch(ctx(t), a), "insert a")
		must(t, batches.InsertBatch(ctx(t), b), "insert b")
		if ok, _ := batches.LeaseBatch(ctx(t), a.ID, "n1", 1000, 5000); !ok {
			t.Fatal("lease lost")
		}
		if ok, _ := batches.LeaseBatch(ctx(t), a.ID, "n2", 2000, 6000); ok {
			t.Fatal("a live lease was taken by another node")
		}
		if got, _ := batches.Active(ctx(t), 2000, 10); len(got) != 0 {
			t.Fatalf("active under a live lease = %d", len(got))
		}
		got, _ := batches.Active(ctx(t), 6000, 10)
		if len(got) != 1 || got[0].PublicID != "batch_a" {
			t.Fatalf("active = %+v", got)
		}
		a.NextPollAt = 9000
		if ok, err := batches.SaveBatch(ctx(t), a); !ok || err != nil {
			t.Fatalf("save: %v %v", ok, err)
		}
		if got, _ := batches.Active(ctx(t), 8000, 10); len(got) != 0 {
			t.Fatalf("active before its next poll = %d", len(got))
		}
		if got, _ := batches.Active(ctx(t), 9000, 10); len(got) != 1 {
			t.Fatalf("active at its next poll = %d", len(got))
		}
		list, _ := batches.ListBatches(ctx(t), 1, "openai", "batch_b", 10)
		if len(list) != 1 || list[0].PublicID != "batch_a" {
			t.Fatalf("list after batch_b = %+v", list)
		}
	}},
	{"a line's outcome is recorded once and read back in order", func(t *testing.T, s store.Store) {
		_, batches := filesAndBatches(t, s)
		for _, n := range []int{2, 1, 3} {
			ok, err := batches.PutLine(ctx(t), &store.BatchLine{BatchID: 9, Line: n, CustomID: "c" + itoa(int64(n)), Model: "m", OK: n != 3,
				Status: 200, Body: `{"x":1}`, InputTokens: n, OutputTokens: 1, Quota: int64(10 * n), Cost: map[int]string{2: "3/500000"}[n]})
			if !ok || err != nil {
				t.Fatalf("put %d: %v %v", n, ok, err)
			}
		}
		if ok, err := batches.PutLine(ctx(t), &store.BatchLine{BatchID: 9, Line: 1, CustomID: "again", Body: "{}"}); ok || err != nil {
			t.Fatalf("second outcome of line 1 = %v %v, want ignored", ok, err)
		}
		got, err := batches.Lines(ctx(t), 9, 1, 10)
		if err != nil || len(got) != 2 || got[0].Line != 2 || got[1].Line != 3 || got[1].OK || got[0].Quota != 20 || got[0].CustomID != "c2" ||
			got[0].Cost != "3/500000" || got[1].Cost != "" {
			t.Fatalf("lines = %+v, %v", got, err)
		}
		first, _ := batches.Lines(ctx(t), 9, 0, 1)
		if len(first) != 1 || first[0].CustomID != "c1" {
			t.Fatalf("line 1 = %+v", first)
		}
	}},
}
