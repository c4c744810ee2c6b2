package loadtest

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestTakeProfilesSavesEveryProfileOfAChildThatServesThem(t *testing.T) {
	t.Setenv(PprofEnv, "1")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	url, err := servePprof(ctx)
	if err != nil || !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("servePprof = %q, %v", url, err)
	}
	dir := t.TempDir()
	if err := takeProfiles(ctx, &child{role: roleGateway, pprofURL: url}, dir, "gateway-many-streams-1000-r1"); err != nil {
		t.Fatal(err)
	}
	for _, p := range profiles {
		raw, err := os.ReadFile(filepath.Join(dir, "gateway-many-streams-1000-r1."+p.file))
		if err != nil || len(raw) == 0 {
			t.Fatalf("%s: %d bytes, %v", p.file, len(raw), err)
		}
		if p.file == "memstats.txt" && !strings.Contains(string(raw), "# Stack = ") {
			t.Errorf("memstats.txt holds no runtime.MemStats: %.200q", raw)
		}
		if p.file == "smaps.txt" && runtime.GOOS == "linux" && !strings.Contains(string(raw), "\nRss: ") {
			t.Errorf("smaps.txt holds no mapping's resident size: %.200q", raw)
		}
	}
}

func TestTakeProfilesSkipsAChildWithoutProfiles(t *testing.T) {
	dir := t.TempDir()
	if err := takeProfiles(context.Background(), &child{role: roleProxy}, dir, "baseline"); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("wrote %d files for a child that serves no profiles", len(entries))
	}
}

func TestServePprofIsOffUnlessAsked(t *testing.T) {
	t.Setenv(PprofEnv, "")
	if url, err := servePprof(context.Background()); url != "" || err != nil {
		t.Errorf("servePprof = %q, %v; want no server", url, err)
	}
}
