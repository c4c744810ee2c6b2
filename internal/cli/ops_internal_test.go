package cli

import (
	"bytes"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// envOf is a getenv over a fixed map, so tests never read the machine's.
func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// closedAddress is a local address nothing listens on.
func closedAddress(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

func TestConfigCheckPassesAGoodConfiguration(t *testing.T) {
	db := "sqlite:" + filepath.Join(t.TempDir(), "t.db")
	var out, errOut bytes.Buffer
	code := Main([]string{"config", "check"}, &out, &errOut, envOf(map[string]string{"TURNPIKE_DATABASE": db}))
	if code != 0 {
		t.Fatalf("exit %d: %s%s", code, out.String(), errOut.String())
	}
}

func TestConfigCheckListsEveryProblemAndExitsOne(t *testing.T) {
	dir := t.TempDir()
	yaml := filepath.Join(dir, "turnpike.yaml")
	body := "listen: nonsense\nquota_per_usd: -1\nusers:\n  - role: admin\n"
	if err := os.WriteFile(yaml, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	env := envOf(map[string]string{
		"TURNPIKE_DATABASE": "postgres://nobody@" + closedAddress(t) + "/x?sslmode=disable",
		"TURNPIKE_REDIS":    "redis://" + closedAddress(t) + "/0",
	})
	var out, errOut bytes.Buffer
	code := Main([]string{"config", "check", "--config", yaml}, &out, &errOut, env)
	if code != 1 {
		t.Fatalf("exit %d, want 1: %s", code, out.String())
	}
	for _, want := range []string{"listen", "quota_per_usd", "users[0].username", "database:", "redis does not answer"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output does not name %q:\n%s", want, out.String())
		}
	}
	if n := strings.Count(out.String(), "problem: "); n < 5 {
		t.Errorf("%d problems listed, want every one (5):\n%s", n, out.String())
	}
}

func TestConfigCheckReportsAnUnreadableFile(t *testing.T) {
	var out, errOut bytes.Buffer
	code := Main([]string{"config", "check", "--config", filepath.Join(t.TempDir(), "missing.yaml")}, &out, &errOut, envOf(nil))
	if code != 1 || !strings.Contains(out.String(), "missing.yaml") {
		t.Fatalf("exit %d, said %q", code, out.String())
	}
}

func TestMigrateCreatesTheSchemaAndIsRepeatable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.db")
	env := envOf(map[string]string{"TURNPIKE_DATABASE": "sqlite:" + path})
	for i := 0; i < 2; i++ {
		var out, errOut bytes.Buffer
		if code := Main([]string{"migrate"}, &out, &errOut, env); code != 0 {
			t.Fatalf("run %d: exit %d: %s", i, code, errOut.String())
		}
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("no database file: %v", err)
	}
}

func TestHealthcheckFollowsTheHealthzAnswer(t *testing.T) {
	healthy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" {
			http.NotFound(w, r)
		}
	}))
	defer healthy.Close()
	sick := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer sick.Close()
	cases := []struct {
		name string
		args []string
		env  map[string]string
		code int
	}{
		{"healthy by --url", []string{"--url", healthy.URL}, nil, 0},
		{"healthy by --url with a trailing slash", []string{"--url", healthy.URL + "/"}, nil, 0},
		{"healthy by listen", nil, map[string]string{"TURNPIKE_LISTEN": strings.TrimPrefix(healthy.URL, "http://")}, 0},
		{"answers 503", []string{"--url", sick.URL}, nil, 1},
		{"nothing listening", []string{"--url", "http://" + closedAddress(t)}, nil, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			if code := Main(append([]string{"healthcheck"}, tc.args...), &out, &errOut, envOf(tc.env)); code != tc.code {
				t.Fatalf("exit %d, want %d: %s", code, tc.code, errOut.String())
			}
		})
	}
}
