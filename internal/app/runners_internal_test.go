package app

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/store/sqlstore"
)

func TestBackgroundLoopsStopInTheReverseOrderOfTheirStart(t *testing.T) {
	var mu sync.Mutex
	var events []string
	note := func(e string) { mu.Lock(); events = append(events, e); mu.Unlock() }
	started := make(chan struct{}, 3)
	loop := func(name string) runner {
		return runner{name, func(ctx context.Context) {
			started <- struct{}{}
			<-ctx.Done()
			note("stopped " + name)
		}}
	}
	r := startRunners(slog.New(slog.DiscardHandler), []runner{loop("lease"), loop("poller"), loop("refresh")})
	for range 3 {
		<-started
	}
	r.stop()
	want := []string{"stopped refresh", "stopped poller", "stopped lease"}
	if !slices.Equal(events, want) {
		t.Fatalf("stops %v, want %v", events, want)
	}
}

func TestALoopThatIsSlowToStopIsNamedAndAwaited(t *testing.T) {
	var logs bytes.Buffer
	r := startRunners(slog.New(slog.NewTextHandler(&logs, nil)), []runner{{"slow-writer", func(ctx context.Context) {
		<-ctx.Done()
		time.Sleep(60 * time.Millisecond)
	}}})
	r.slow = 10 * time.Millisecond
	begin := time.Now()
	r.stop()
	if time.Since(begin) < 60*time.Millisecond {
		t.Fatal("stop returned before the loop ended")
	}
	if !strings.Contains(logs.String(), "loop=slow-writer") {
		t.Fatalf("log %q does not name the slow loop", logs.String())
	}
}

func TestEveryBackgroundLoopHasAUniqueName(t *testing.T) {
	st, err := sqlstore.OpenStore(context.Background(), "sqlite:"+filepath.Join(t.TempDir(), "loops.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	a := &App{Store: st, Log: slog.New(slog.DiscardHandler)}
	a.Config.PriceCatalogue.URL = "https://example.com/prices.json"
	// Retention with an archive, so the archive loop is among them.
	a.Config.LogRetentionDays = 30
	a.Config.Logs.Archive.S3 = config.S3Bucket{Endpoint: "http://127.0.0.1:1", Region: "us-east-1", Bucket: "b", AccessKeyID: "k", SecretAccessKey: "s"}
	seen := map[string]bool{}
	for _, r := range a.runners() {
		if r.name == "" || seen[r.name] || r.run == nil {
			t.Fatalf("loop %q: empty, repeated or without a body", r.name)
		}
		seen[r.name] = true
	}
	for _, name := range []string{"billing-lease", "task-poller", "price-watch", "log-archive", "rollup-backfill", "snapshot-refresh"} {
		if !seen[name] {
			t.Errorf("no loop %q", name)
		}
	}
}
