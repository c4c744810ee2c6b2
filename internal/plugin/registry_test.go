package plugin

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/plugin/jsrt"
	"github.com/turnpike-gw/turnpike/internal/store"
)

func TestUploadActivatesOnlyTheFirstVersionUnlessAsked(t *testing.T) {
	r, _ := newTestRegistry(t)
	ctx := context.Background()
	first := mustUpload(t, r, UploadRequest{Source: source(t, "per_task.js")})
	if !first.Active || !first.Enabled || first.Key != "acme-video" || first.Version != "1.0.0" {
		t.Fatalf("first upload = %+v, want active and enabled acme-video@1.0.0", first)
	}
	second := mustUpload(t, r, UploadRequest{Source: source(t, "per_task.js", "1.1.0")})
	if second.Active {
		t.Fatalf("a later version without activate must not become active: %+v", second)
	}
	if l, _ := r.Current().Plugin("acme-video"); l.Version != "1.0.0" {
		t.Fatalf("live version = %s, want 1.0.0", l.Version)
	}
	third := mustUpload(t, r, UploadRequest{Source: source(t, "per_task.js", "1.2.0"), Activate: true})
	if !third.Active {
		t.Fatalf("activate: true must activate: %+v", third)
	}
	if err := r.Activate(ctx, "acme-video", "1.1.0", false); err != nil {
		t.Fatalf("Activate: %v", err)
	}
	if l, _ := r.Current().Plugin("acme-video"); l.Version != "1.1.0" {
		t.Fatalf("live version after activate = %s, want 1.1.0", l.Version)
	}
}

func TestUploadIsImmutablePerVersion(t *testing.T) {
	r, _ := newTestRegistry(t)
	mustUpload(t, r, UploadRequest{Source: source(t, "per_task.js")})
	again := mustUpload(t, r, UploadRequest{Source: source(t, "per_task.js")})
	if !again.Unchanged || !again.Active {
		t.Fatalf("same source again = %+v, want unchanged and still active", again)
	}
	_, err := r.Upload(context.Background(), UploadRequest{Source: source(t, "per_task.js") + "\n// changed\n"})
	var pe *Error
	if !errors.As(err, &pe) || pe.Status != 409 || pe.Code != "version_exists" {
		t.Fatalf("different source under the same version: err = %v, want 409 version_exists", err)
	}
}

func TestUploadRefusesInvalidPluginsWithEveryProblem(t *testing.T) {
	r, _ := newTestRegistry(t)
	_, err := r.Upload(context.Background(), UploadRequest{Source: source(t, "invalid.js")})
	var pe *Error
	if !errors.As(err, &pe) || pe.Status != 400 || pe.Code != "plugin_invalid" {
		t.Fatalf("err = %v, want 400 plugin_invalid", err)
	}
	if len(pe.Problems) < 4 {
		t.Fatalf("want every problem listed, got %v", pe.Problems)
	}
	if _, err := r.Upload(context.Background(), UploadRequest{Source: source(t, "per_task.js"), Force: true, Icon: make([]byte, MaxIconBytes+1)}); !errors.As(err, &pe) || pe.Status != 400 {
		t.Fatalf("oversized icon: err = %v, want 400 (force never skips own validation)", err)
	}
}

func TestForcedConflictIsHeldBackUntilTheConflictIsGone(t *testing.T) {
	r, _ := newTestRegistry(t)
	ctx := context.Background()
	mustUpload(t, r, UploadRequest{Source: source(t, "per_task.js")})
	_, err := r.Upload(ctx, UploadRequest{Source: source(t, "conflicting.js")})
	var pe *Error
	if !errors.As(err, &pe) || pe.Status != 400 || pe.Code != "plugin_conflict" || len(pe.Problems) != 2 {
		t.Fatalf("conflict without force: err = %v, want 400 plugin_conflict with 2 problems", err)
	}
	res := mustUpload(t, r, UploadRequest{Source: source(t, "conflicting.js"), Force: true})
	if !res.Active || res.Enabled || !res.HeldBack || len(res.Problems) != 2 {
		t.Fatalf("forced upload = %+v, want active, held back, not enabled, problems listed", res)
	}
	gen := r.Current()
	if _, ok := gen.Plugin("copycat"); ok {
		t.Fatal("a held back plugin must not be served")
	}
	if e, _, ok := gen.MatchRoute("POST", "/acme/v1/videos"); !ok || e.Plugin.Key != "acme-video" {
		t.Fatal("the route must stay with the plugin that owned it")
	}
	if err := r.SetEnabled(ctx, "acme-video", false, false); err != nil {
		t.Fatal(err)
	}
	if l, ok := r.Current().Plugin("copycat"); !ok || !l.Enabled {
		t.Fatal("once the conflict is gone the held back plugin must be served")
	}
	if e, _, ok := r.Current().MatchRoute("POST", "/acme/v1/videos"); !ok || e.Plugin.Key != "copycat" {
		t.Fatal("the route must now be served by copycat")
	}
	if err := r.SetEnabled(ctx, "acme-video", true, false); !errors.As(err, &pe) || pe.Status != 400 {
		t.Fatalf("re-enabling into a conflict: err = %v, want 400", err)
	}
}

func TestPinnedGenerationStaysUsableAfterANewOneIsPublished(t *testing.T) {
	r, _ := newTestRegistry(t)
	ctx := context.Background()
	mustUpload(t, r, UploadRequest{Source: source(t, "per_task.js")})
	pinned := r.Current()
	old, _ := pinned.Plugin("acme-video")
	mustUpload(t, r, UploadRequest{Source: source(t, "per_task.js", "2.0.0"), Activate: true})
	next := r.Current()
	if next.Number <= pinned.Number || next.Revision == pinned.Revision {
		t.Fatalf("a new generation must be published: %d/%s then %d/%s", pinned.Number, pinned.Revision, next.Number, next.Revision)
	}
	if l, _ := pinned.Plugin("acme-video"); l.Version != "1.0.0" {
		t.Fatalf("the pinned generation changed under the request: %s", l.Version)
	}
	if l, _ := next.Plugin("acme-video"); l.Version != "2.0.0" {
		t.Fatalf("new generation serves %s, want 2.0.0", l.Version)
	}
	got, err := old.Pool.Call(ctx, "buildQueryRequest", map[string]any{"baseUrl": "https://x.example", "taskId": "t1"})
	if err != nil {
		t.Fatalf("the pinned version's runtime must keep working: %v", err)
	}
	if got.(map[string]any)["url"] != "https://x.example/v1/videos/t1" {
		t.Fatalf("unexpected hook result %v", got)
	}
}

func TestRebuildReusesCompiledVersionsAndRetiresUnusedOnes(t *testing.T) {
	r, _ := newTestRegistry(t)
	ctx := context.Background()
	r.opts.RetireGrace = time.Millisecond
	mustUpload(t, r, UploadRequest{Source: source(t, "per_task.js")})
	before, _ := r.Current().Plugin("acme-video")
	mustUpload(t, r, UploadRequest{Source: source(t, "batch.js")})
	after, _ := r.Current().Plugin("acme-video")
	if before.Pool != after.Pool {
		t.Fatal("an unchanged version must keep its compiled runtime across generations")
	}
	mustUpload(t, r, UploadRequest{Source: source(t, "per_task.js", "1.5.0"), Activate: true})
	time.Sleep(5 * time.Millisecond)
	r.reap(time.Now())
	if _, err := before.Pool.Call(ctx, "parseTaskResult", map[string]any{}, map[string]any{"status": "done"}); !errors.Is(err, jsrt.ErrPoolClosed) {
		t.Fatalf("a version no generation serves must be closed after the grace period, got %v", err)
	}
}

func TestLoadVersionCompilesInactiveVersionsForPolling(t *testing.T) {
	r, _ := newTestRegistry(t)
	ctx := context.Background()
	mustUpload(t, r, UploadRequest{Source: source(t, "per_task.js")})
	mustUpload(t, r, UploadRequest{Source: source(t, "per_task.js", "2.0.0"), Activate: true})
	l, err := r.LoadVersion(ctx, "acme-video", "1.0.0")
	if err != nil || l.Version != "1.0.0" || l.Enabled {
		t.Fatalf("LoadVersion = %+v, %v; want the disabled 1.0.0", l, err)
	}
	if _, err := l.Pool.Call(ctx, "parseTaskResult", map[string]any{}, map[string]any{"status": "done"}); err != nil {
		t.Fatal(err)
	}
	mustUpload(t, r, UploadRequest{Source: source(t, "batch.js")})
	if v, ok := r.Current().Version("acme-video", "1.0.0"); !ok || v.Pool != l.Pool {
		t.Fatal("a version loaded for polling must be offered by the next generation")
	}
	var pe *Error
	if _, err := r.LoadVersion(ctx, "acme-video", "9.9.9"); !errors.As(err, &pe) || pe.Status != 404 {
		t.Fatalf("unknown version: err = %v, want 404", err)
	}
}

func TestTwoNodesConvergeThroughTheRevision(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shared.db")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a := NewRegistry(Options{Store: openStore(t, path), Node: "a"})
	b := NewRegistry(Options{Store: openStore(t, path), Node: "b"})
	t.Cleanup(a.Close)
	t.Cleanup(b.Close)
	for _, r := range []*Registry{a, b} {
		if err := r.Load(ctx); err != nil {
			t.Fatal(err)
		}
	}
	go b.Watch(ctx, 10*time.Millisecond)
	mustUpload(t, a, UploadRequest{Source: source(t, "per_task.js")})
	waitFor(t, func() bool { _, ok := b.Current().Plugin("acme-video"); return ok })
	if err := a.SetEnabled(ctx, "acme-video", false, false); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { _, ok := b.Current().Plugin("acme-video"); return !ok })
	if a.Current().Revision != b.Current().Revision {
		t.Fatalf("nodes disagree on the revision: %s vs %s", a.Current().Revision, b.Current().Revision)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in time")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestDeleteRefusesPluginsThatChannelsBind(t *testing.T) {
	r, st := newTestRegistry(t)
	ctx := context.Background()
	mustUpload(t, r, UploadRequest{Source: source(t, "per_task.js")})
	mustUpload(t, r, UploadRequest{Source: source(t, "batch.js")})
	channels := []store.Channel{
		{Name: "by-key", Type: ChannelTypeTaskPlugin, Settings: map[string]any{"task_plugin_key": "acme-video"}},
		{Name: "by-extension", Type: ChannelTypePeerAPI, Settings: map[string]any{"task_extend_plugin_keys": []any{"other", "acme-video"}}},
		{Name: "by-legacy-type", Type: 1901},
		{Name: "unrelated", Type: ChannelTypeTaskPlugin, Settings: map[string]any{"task_plugin_key": "tunebox"}},
	}
	for i := range channels {
		c := &channels[i]
		c.BaseURL, c.Key, c.Models, c.Groups, c.Status = "https://x.example", "sk-secret", []string{"acme-v1"}, []string{"default"}, store.StatusEnabled
		if err := st.Channels().Create(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	bound, err := r.BoundChannels(ctx, "acme-video")
	if err != nil || len(bound) != 3 {
		t.Fatalf("BoundChannels = %d channels, %v; want 3", len(bound), err)
	}
	var pe *Error
	if err := r.Delete(ctx, "acme-video"); !errors.As(err, &pe) || pe.Status != 409 {
		t.Fatalf("Delete of a bound plugin: err = %v, want 409", err)
	}
	for _, name := range []string{"by-key", "by-extension", "by-legacy-type"} {
		if !strings.Contains(pe.Message, name) {
			t.Errorf("the refusal must name channel %q: %s", name, pe.Message)
		}
	}
	if err := st.Channels().Delete(ctx, channels[3].ID); err != nil {
		t.Fatal(err)
	}
	if err := r.Delete(ctx, "tunebox"); err != nil {
		t.Fatalf("Delete of an unbound plugin: %v", err)
	}
	if _, ok := r.Current().Plugin("tunebox"); ok {
		t.Fatal("a deleted plugin must leave the generation")
	}
}

func TestDeleteVersionOnlyRemovesInactiveVersions(t *testing.T) {
	r, _ := newTestRegistry(t)
	ctx := context.Background()
	mustUpload(t, r, UploadRequest{Source: source(t, "per_task.js")})
	mustUpload(t, r, UploadRequest{Source: source(t, "per_task.js", "1.1.0")})
	var pe *Error
	if err := r.DeleteVersion(ctx, "acme-video", "1.0.0"); !errors.As(err, &pe) || pe.Status != 409 {
		t.Fatalf("deleting the active version: err = %v, want 409", err)
	}
	if err := r.DeleteVersion(ctx, "acme-video", "1.1.0"); err != nil {
		t.Fatal(err)
	}
	if err := r.DeleteVersion(ctx, "acme-video", "1.1.0"); !errors.As(err, &pe) || pe.Status != 404 {
		t.Fatalf("deleting it twice: err = %v, want 404", err)
	}
}

func TestInstallFileIsIdempotentAndActivates(t *testing.T) {
	r, _ := newTestRegistry(t)
	ctx := context.Background()
	mustUpload(t, r, UploadRequest{Source: source(t, "per_task.js", "0.9.0")})
	res, err := r.InstallFile(ctx, "testdata/per_task.js")
	if err != nil || !res.Active {
		t.Fatalf("InstallFile = %+v, %v; want the file's version active", res, err)
	}
	rev := r.Current().Revision
	again, err := r.InstallFile(ctx, "testdata/per_task.js")
	if err != nil || !again.Unchanged || !again.Active {
		t.Fatalf("second InstallFile = %+v, %v", again, err)
	}
	if r.Current().Revision != rev {
		t.Fatal("installing the same file again must not change the revision")
	}
}

func TestDefaultBaseURLComesFromTheActiveVersion(t *testing.T) {
	r, _ := newTestRegistry(t)
	mustUpload(t, r, UploadRequest{Source: source(t, "per_task.js"), Enabled: boolPtr(false)})
	g := r.Current()
	if got := g.DefaultBaseURL("acme-video"); got != "https://api.acme-video.example" {
		t.Errorf("DefaultBaseURL = %q", got)
	}
	if got := g.DefaultBaseURL("missing"); got != "" {
		t.Errorf("DefaultBaseURL of an unknown key = %q, want empty", got)
	}
}

func TestInstallFileIsAudited(t *testing.T) {
	r, _ := newTestRegistry(t)
	ctx := context.Background()
	if _, err := r.InstallFile(ctx, "testdata/per_task.js"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.InstallFile(ctx, "testdata/invalid.js"); err == nil {
		t.Fatal("an invalid seed plugin must fail")
	}
	log, err := r.db.auditLog(ctx, 5)
	if err != nil || len(log) != 2 || log[0].Outcome != "plugin_invalid" || log[1].Key != "acme-video" || log[1].Action != "seed_install" {
		t.Fatalf("audit log %+v, %v", log, err)
	}
}
