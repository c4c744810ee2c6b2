// Package deploy_test checks the deployment files without Docker: the
// compose file parses and describes three nodes sharing one database, one
// Redis and one CRYPTO_SECRET behind the load balancer, and the Dockerfile
// builds the gateway's real package path as a static binary run as non-root.
package deploy_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/turnpike-gw/turnpike/internal/config"
)

type composeFile struct {
	Services map[string]struct {
		Image       string            `yaml:"image"`
		Build       map[string]any    `yaml:"build"`
		Command     []string          `yaml:"command"`
		Environment map[string]string `yaml:"environment"`
		Volumes     []string          `yaml:"volumes"`
		Ports       []string          `yaml:"ports"`
		DependsOn   yaml.Node         `yaml:"depends_on"`
		Networks    map[string]struct {
			IPv4 string `yaml:"ipv4_address"`
		} `yaml:"networks"`
	} `yaml:"services"`
	Volumes  map[string]any `yaml:"volumes"`
	Networks map[string]any `yaml:"networks"`
}

var nodes = []string{"turnpike-1", "turnpike-2", "turnpike-3"}

func TestComposeRunsThreeNodesOnSharedStateBehindTheBalancer(t *testing.T) {
	raw, err := os.ReadFile("compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var c composeFile
	if err := yaml.Unmarshal(raw, &c); err != nil {
		t.Fatalf("compose.yaml does not parse: %v", err)
	}
	for _, s := range []string{"postgres", "redis", "lb"} {
		if _, ok := c.Services[s]; !ok {
			t.Errorf("service %s missing", s)
		}
	}
	first := c.Services[nodes[0]]
	for _, name := range nodes {
		n, ok := c.Services[name]
		if !ok {
			t.Fatalf("service %s missing", name)
		}
		env := n.Environment
		if !strings.HasPrefix(env["TURNPIKE_DATABASE"], "postgres://") || !strings.Contains(env["TURNPIKE_DATABASE"], "@postgres:5432/") {
			t.Errorf("%s: TURNPIKE_DATABASE %q is not the shared PostgreSQL", name, env["TURNPIKE_DATABASE"])
		}
		if env["TURNPIKE_REDIS"] != "redis://redis:6379/0" {
			t.Errorf("%s: TURNPIKE_REDIS %q is not the shared Redis", name, env["TURNPIKE_REDIS"])
		}
		for _, k := range []string{"TURNPIKE_DATABASE", "TURNPIKE_REDIS", "CRYPTO_SECRET", "TURNPIKE_ROOT_TOKEN"} {
			if env[k] == "" || env[k] != first.Environment[k] {
				t.Errorf("%s: %s %q differs from %s's %q", name, k, env[k], nodes[0], first.Environment[k])
			}
		}
		if n.Build["dockerfile"] != "deploy/Dockerfile" || n.Build["context"] != ".." {
			t.Errorf("%s: build %v, want the repository root with deploy/Dockerfile", name, n.Build)
		}
		if len(n.Command) < 3 || n.Command[0] != "serve" || n.Command[1] != "--config" {
			t.Errorf("%s: command %v", name, n.Command)
		}
		// The seed file every node mounts is a valid configuration.
		for _, v := range n.Volumes {
			host, rest, _ := strings.Cut(v, ":")
			target, _, _ := strings.Cut(rest, ":")
			if target == n.Command[2] {
				if _, err := config.Load(filepath.Clean(host), func(string) string { return "" }); err != nil {
					t.Errorf("%s: the mounted %s does not load: %v", name, host, err)
				}
			}
		}
	}
	if len(c.Services["lb"].Ports) == 0 {
		t.Error("the load balancer publishes no port")
	}
	conf, err := os.ReadFile("nginx.conf")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range nodes {
		if !strings.Contains(string(conf), "server "+name+":3000") {
			t.Errorf("nginx.conf does not balance over %s:3000", name)
		}
	}
	for _, directive := range []string{"proxy_buffering off", "proxy_set_header Upgrade $http_upgrade", "proxy_http_version 1.1"} {
		if !strings.Contains(string(conf), directive) {
			t.Errorf("nginx.conf lacks %q (streams and realtime need it)", directive)
		}
	}
}

func TestDockerfileBuildsTheStaticGatewayAsNonRoot(t *testing.T) {
	raw, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	df := string(raw)
	// Continued lines are one command.
	build := regexp.MustCompile(`go build[^\n]*`).FindString(strings.ReplaceAll(df, "\\\n", " "))
	m := regexp.MustCompile(`-o \S+ (\./\S+)`).FindStringSubmatch(build)
	if m == nil {
		t.Fatalf("no go build of a package in the Dockerfile:\n%s", build)
	}
	if m[1] != "./cmd/turnpike" {
		t.Errorf("the Dockerfile builds %s, want ./cmd/turnpike", m[1])
	}
	// The path is relative to the build context, the repository root.
	if _, err := os.Stat(filepath.Join("..", m[1], "main.go")); err != nil {
		t.Errorf("%s is not a package of the repository: %v", m[1], err)
	}
	if !strings.Contains(df, "CGO_ENABLED=0") {
		t.Error("the binary is not built static (CGO_ENABLED=0)")
	}
	if !strings.Contains(df, "internal/app.Version=") {
		t.Error("the version is not stamped into the binary")
	}
	froms := regexp.MustCompile(`(?m)^FROM (\S+)`).FindAllStringSubmatch(df, -1)
	if len(froms) < 2 {
		t.Fatalf("not a multi-stage build: %v", froms)
	}
	if final := froms[len(froms)-1][1]; !strings.Contains(final, "distroless/static") {
		t.Errorf("final image %s, want distroless/static", final)
	}
	user := regexp.MustCompile(`(?m)^USER (\S+)`).FindStringSubmatch(df)
	if user == nil || strings.HasPrefix(user[1], "0") || strings.HasPrefix(user[1], "root") {
		t.Errorf("the image does not run as a non-root user: %v", user)
	}
}

func TestContainersAreProbedWithTheHealthcheckCommand(t *testing.T) {
	df, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^HEALTHCHECK .*\n?.*turnpike", "healthcheck"`).Match(df) {
		t.Error("the Dockerfile has no HEALTHCHECK running turnpike healthcheck")
	}
	raw, err := os.ReadFile("compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Services map[string]struct {
			Healthcheck struct {
				Test []string `yaml:"test"`
			} `yaml:"healthcheck"`
			DependsOn map[string]struct {
				Condition string `yaml:"condition"`
			} `yaml:"depends_on"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	for _, name := range nodes {
		test := strings.Join(c.Services[name].Healthcheck.Test, " ")
		if !strings.HasSuffix(test, "turnpike healthcheck") {
			t.Errorf("%s: healthcheck %q, want turnpike healthcheck", name, test)
		}
		if c.Services["lb"].DependsOn[name].Condition != "service_healthy" {
			t.Errorf("the balancer does not wait for %s to be healthy", name)
		}
	}
}

func TestNginxKeepsNodesUpThroughAProviderOutageAndMetricsPrivate(t *testing.T) {
	raw, err := os.ReadFile("nginx.conf")
	if err != nil {
		t.Fatal(err)
	}
	conf := string(raw)
	next := regexp.MustCompile(`(?m)^\s*proxy_next_upstream\s+([^;]*);`).FindAllStringSubmatch(conf, -1)
	if len(next) == 0 {
		t.Fatal("no proxy_next_upstream: a dead node's requests would fail")
	}
	for _, m := range next {
		if strings.Contains(m[1], "http_5") {
			t.Errorf("proxy_next_upstream %q counts the gateway's provider-failure answers as a dead node", m[1])
		}
	}
	if !regexp.MustCompile(`location = /metrics\s*\{\s*(return 40[34]|deny all)`).MatchString(conf) {
		t.Error("/metrics is reachable through the public balancer")
	}
}

// Behind nginx every client has nginx's address unless the nodes trust
// nginx's X-Forwarded-For: the shipped files must say so, for nginx alone.
func TestTheNodesTrustTheBalancerAloneForTheClientAddress(t *testing.T) {
	raw, err := os.ReadFile("compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var c composeFile
	if err := yaml.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	lb := c.Services["lb"].Networks["default"].IPv4
	if lb == "" {
		t.Fatal("the balancer has no fixed address the nodes could trust")
	}
	for _, name := range nodes {
		if got := c.Services[name].Environment["TURNPIKE_TRUSTED_PROXIES"]; got != lb {
			t.Errorf("%s: TURNPIKE_TRUSTED_PROXIES %q, want the balancer's %s alone", name, got, lb)
		}
	}
	conf, err := os.ReadFile("nginx.conf")
	if err != nil {
		t.Fatal(err)
	}
	for _, directive := range []string{"proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;", `proxy_set_header Forwarded "";`} {
		if !strings.Contains(string(conf), directive) {
			t.Errorf("nginx.conf lacks %q", directive)
		}
	}
}

func TestTheBuildContextLeavesOutLocalState(t *testing.T) {
	for _, file := range []string{"../.dockerignore", "Dockerfile.dockerignore"} {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(raw), "\n")
		for _, want := range []string{".git", "**/data", "**/node_modules"} {
			found := false
			for _, l := range lines {
				found = found || strings.TrimSpace(l) == want
			}
			if !found {
				t.Errorf("%s does not exclude %s", file, want)
			}
		}
	}
}
