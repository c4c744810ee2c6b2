package cli

import (
	"bytes"
	"context"
	"errors"
	"net"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/app"
)

func TestAStopDuringStartUpIsNotAFailure(t *testing.T) {
	stopped, cancel := context.WithCancel(context.Background())
	cancel()
	cases := []struct {
		name string
		ctx  context.Context
		code int
		says string
	}{
		{"a stop signal arrived", stopped, 0, "stopped during start-up"},
		{"the start really failed", context.Background(), 1, "database is gone"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			if code := startFailed(tc.ctx, &out, errors.New("database is gone")); code != tc.code || !strings.Contains(out.String(), tc.says) {
				t.Fatalf("code %d, said %q", code, out.String())
			}
		})
	}
}

func TestHelpListsTheCommandsAndExitsZero(t *testing.T) {
	for _, arg := range []string{"help", "--help", "-h", "-help"} {
		t.Run(arg, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := Main([]string{arg}, &out, &errOut, func(string) string { return "" })
			if code != 0 {
				t.Fatalf("exit %d, stderr %q", code, errOut.String())
			}
			for _, cmd := range []string{"serve", "demo", "help", "version", "plugin check"} {
				if !strings.Contains(out.String(), cmd) {
					t.Errorf("help does not list %q:\n%s", cmd, out.String())
				}
			}
		})
	}
}

func TestVersionPrintsVersionCommitAndDate(t *testing.T) {
	for _, arg := range []string{"version", "--version"} {
		var out bytes.Buffer
		if code := Main([]string{arg}, &out, &out, func(string) string { return "" }); code != 0 {
			t.Fatalf("%s: exit %d, said %q", arg, code, out.String())
		}
		if !strings.HasPrefix(out.String(), "turnpike "+app.Version+" commit ") || !strings.Contains(out.String(), " date ") {
			t.Fatalf("%s said %q", arg, out.String())
		}
	}
}

func TestVersionReadsTheBuildsVCSSettings(t *testing.T) {
	stamped := &debug.BuildInfo{Settings: []debug.BuildSetting{
		{Key: "vcs", Value: "git"},
		{Key: "vcs.revision", Value: "ef26100abc"},
		{Key: "vcs.time", Value: "2026-11-28T08:00:00Z"},
		{Key: "vcs.modified", Value: "true"},
	}}
	cases := []struct {
		name string
		read func() (*debug.BuildInfo, bool)
		want string
	}{
		{"stamped build", func() (*debug.BuildInfo, bool) { return stamped, true }, "turnpike 1.2.3 commit ef26100abc (modified) date 2026-11-28T08:00:00Z\n"},
		{"built with -buildvcs=false", func() (*debug.BuildInfo, bool) { return &debug.BuildInfo{}, true }, "turnpike 1.2.3 commit unknown date unknown\n"},
		{"no build information at all", func() (*debug.BuildInfo, bool) { return nil, false }, "turnpike 1.2.3 commit unknown date unknown\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			printVersion(&out, "1.2.3", readBuildVCS(tc.read))
			if out.String() != tc.want {
				t.Fatalf("got %q, want %q", out.String(), tc.want)
			}
		})
	}
}

func TestRootPasswordIsShownWhenThePortIsTaken(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	env := envOf(map[string]string{
		"TURNPIKE_DATABASE": "sqlite:" + filepath.Join(t.TempDir(), "first.db"),
		"TURNPIKE_LISTEN":   taken.Addr().String(),
		"CRYPTO_SECRET":     strings.Repeat("ab", 32),
	})
	var out, errOut bytes.Buffer
	code := Main([]string{"serve"}, &out, &errOut, env)
	if code != 1 {
		t.Fatalf("exit %d, want 1 (the port is taken): %s", code, errOut.String())
	}
	if !shownPassword.MatchString(out.String()) || !strings.Contains(out.String(), "created user root") {
		t.Fatalf("root was created but its password not shown: stdout %q, stderr %q", out.String(), errOut.String())
	}
}

// An image built without .git (deploy/Dockerfile) names its commit through
// -ldflags; the build's own VCS stamp wins when there is one.
func TestVersionFallsBackToTheCommitGivenAtLink(t *testing.T) {
	defer func(c, d string) { buildCommit, buildDate = c, d }(buildCommit, buildDate)
	buildCommit, buildDate = "abc123", "2026-12-01T10:00:00Z"
	none := func() (*debug.BuildInfo, bool) { return nil, false }
	var out bytes.Buffer
	printVersion(&out, "1.2.3", readBuildVCS(none))
	if got := out.String(); got != "turnpike 1.2.3 commit abc123 date 2026-12-01T10:00:00Z\n" {
		t.Fatalf("version line = %q", got)
	}
	stamped := func() (*debug.BuildInfo, bool) {
		return &debug.BuildInfo{Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "def456"}, {Key: "vcs.time", Value: "2026-12-02T00:00:00Z"}}}, true
	}
	if v := readBuildVCS(stamped); v.revision != "def456" {
		t.Fatalf("revision = %q, want the VCS stamp", v.revision)
	}
}
