package compat

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// agentRun is one CLI invocation: where it works, where it keeps its
// settings, and the gateway it must talk to (and nothing else).
type agentRun struct {
	compat string // compat/ with node_modules
	node   string
	gw     string // gateway origin
	proxy  string // where any traffic past the gateway is sent, to be seen
	key    string
	model  string
	work   string // working directory with the note
	home   string // HOME and every config directory of the CLI
	prompt string
}

// agentCLI builds the command for one run; each one turns off telemetry,
// update checks and anything else that would reach past the gateway.
type agentCLI struct {
	name    string
	version string
	command func(ctx context.Context, r agentRun) (*exec.Cmd, error)
}

var agentCLIs = map[string]agentCLI{
	"codex":    {"OpenAI Codex CLI", "@openai/codex", codexCommand},
	"claude":   {"Claude Code", "@anthropic-ai/claude-code", claudeCommand},
	"gemini":   {"Gemini CLI", "@google/gemini-cli", geminiCommand},
	"opencode": {"opencode", "opencode-ai", opencodeCommand},
}

// baseEnv is the test's environment without provider variables or proxies,
// with every home and config directory inside the run's own.
func (r agentRun) baseEnv() []string {
	// PWD too: opencode takes its project directory from it, not from the
	// process's working directory.
	env := []string{"HOME=" + r.home, "PWD=" + r.work, "XDG_CONFIG_HOME=" + filepath.Join(r.home, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(r.home, ".local", "share"), "XDG_CACHE_HOME=" + filepath.Join(r.home, ".cache"),
		"XDG_STATE_HOME=" + filepath.Join(r.home, ".local", "state"),
		"HTTP_PROXY=" + r.proxy, "HTTPS_PROXY=" + r.proxy, "http_proxy=" + r.proxy, "https_proxy=" + r.proxy,
		"NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost", "NO_COLOR=1", "TERM=dumb", "CI=true"}
	for _, kv := range hermeticEnv(os.Environ()) {
		switch name, _, _ := strings.Cut(kv, "="); {
		case name == "HOME", name == "PWD", strings.HasPrefix(name, "XDG_"), strings.HasPrefix(name, "CODEX_"),
			strings.HasPrefix(name, "CLAUDE"), strings.HasPrefix(name, "OPENCODE"):
		default:
			env = append(env, kv)
		}
	}
	return env
}

func codexCommand(ctx context.Context, r agentRun) (*exec.Cmd, error) {
	provider := fmt.Sprintf(`model_providers.turnpike={name="Turnpike",base_url=%q,env_key="TURNPIKE_AGENT_KEY",wire_api="responses",request_max_retries=0,stream_max_retries=0}`, r.gw+"/v1")
	args := []string{"exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "-m", r.model,
		"-c", provider, "-c", "model_provider=turnpike", "-c", "check_for_update_on_startup=false",
		"-c", "analytics.enabled=false", "-c", "feedback.enabled=false",
		// Reasoning on, so a channel with thinking signs it and Codex must
		// send the signature back as the reasoning item's encrypted_content.
		"-c", "model_reasoning_effort=high"}
	// Plugins and apps sync from the vendor's servers at start; the rest add
	// tools this task does not need.
	for _, f := range []string{"plugins", "remote_plugin", "apps", "in_app_updates", "multi_agent", "goals", "shell_snapshot", "enable_request_compression"} {
		args = append(args, "-c", "features."+f+"=false")
	}
	cmd := exec.CommandContext(ctx, filepath.Join(r.compat, "node_modules", ".bin", "codex"), append(args, r.prompt)...)
	cmd.Env = append(r.baseEnv(), "CODEX_HOME="+filepath.Join(r.home, ".codex"), "TURNPIKE_AGENT_KEY="+r.key)
	return cmd, os.MkdirAll(filepath.Join(r.home, ".codex"), 0o700)
}

func claudeCommand(ctx context.Context, r agentRun) (*exec.Cmd, error) {
	// The platform package's binary: the wrapper's bin is only a placeholder
	// until its install script has copied the binary over it.
	bin := filepath.Join(r.compat, "node_modules", "@anthropic-ai", "claude-code-linux-x64", "claude")
	cmd := exec.CommandContext(ctx, bin, "-p", r.prompt, "--model", r.model, "--allowedTools", "Read", "--output-format", "text")
	cmd.Env = append(r.baseEnv(), "ANTHROPIC_BASE_URL="+r.gw, "ANTHROPIC_API_KEY="+r.key,
		"CLAUDE_CONFIG_DIR="+filepath.Join(r.home, ".claude"), "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1", "DISABLE_BUG_COMMAND=1")
	return cmd, nil
}

func geminiCommand(ctx context.Context, r agentRun) (*exec.Cmd, error) {
	settings := map[string]any{
		"general":   map[string]any{"disableAutoUpdate": true, "disableUpdateNag": true, "enableAutoUpdate": false, "enableAutoUpdateNotification": false},
		"privacy":   map[string]any{"usageStatisticsEnabled": false},
		"telemetry": map[string]any{"enabled": false},
		"security":  map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}, "folderTrust": map[string]any{"enabled": false}},
		"ui":        map[string]any{"hideTips": true},
	}
	dir := filepath.Join(r.home, ".gemini")
	raw, _ := json.Marshal(settings)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "settings.json"), raw, 0o600); err != nil {
		return nil, err
	}
	script := filepath.Join(r.compat, "node_modules", "@google", "gemini-cli", "bundle", "gemini.js")
	cmd := exec.CommandContext(ctx, r.node, script, "-p", r.prompt, "-m", r.model, "--yolo", "--output-format", "text")
	cmd.Env = append(r.baseEnv(), "GEMINI_API_KEY="+r.key, "GOOGLE_GEMINI_BASE_URL="+r.gw, "GEMINI_CLI_TRUST_WORKSPACE=true",
		// One process: the CLI otherwise starts itself again with a larger heap.
		"GEMINI_CLI_NO_RELAUNCH=true")
	return cmd, nil
}

func opencodeCommand(ctx context.Context, r agentRun) (*exec.Cmd, error) {
	// An OpenAI-compatible provider: opencode speaks chat completions to it.
	config := map[string]any{
		"$schema": "https://opencode.ai/config.json", "autoupdate": false, "share": "disabled", "snapshot": false,
		"model": "turnpike/" + r.model,
		"provider": map[string]any{"turnpike": map[string]any{
			"npm": "@ai-sdk/openai-compatible", "name": "Turnpike",
			"options": map[string]any{"baseURL": r.gw + "/v1", "apiKey": r.key},
			"models":  map[string]any{r.model: map[string]any{"name": r.model}},
		}},
	}
	raw, _ := json.Marshal(config)
	if err := opencodePluginInstalled(filepath.Join(r.home, ".config", "opencode")); err != nil {
		return nil, err
	}
	path := filepath.Join(r.home, "opencode.json")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		return nil, err
	}
	bin := filepath.Join(r.compat, "node_modules", "opencode-linux-x64", "bin", "opencode")
	cmd := exec.CommandContext(ctx, bin, "run", "--print-logs", "--log-level", "WARN", "-m", "turnpike/"+r.model, r.prompt)
	cmd.Env = append(r.baseEnv(), "OPENCODE_CONFIG="+path, "OPENCODE_DISABLE_AUTOUPDATE=1", "OPENCODE_DISABLE_MODELS_FETCH=1",
		"OPENCODE_DISABLE_LSP_DOWNLOAD=1", "OPENCODE_DISABLE_DEFAULT_PLUGINS=1", "OPENCODE_DISABLE_CLAUDE_CODE=1",
		"OPENCODE_DISABLE_SHARE=1", "OPENCODE_EXPERIMENTAL_DISABLE_FILEWATCHER=1")
	return cmd, nil
}

// opencodePluginInstalled makes opencode's config directory look as if its
// plugin library were installed: at start opencode installs
// @opencode-ai/plugin from the npm registry into each config directory that
// has no node_modules, or whose package-lock does not list it, and no
// setting turns that off.
func opencodePluginInstalled(dir string) error {
	if err := os.MkdirAll(filepath.Join(dir, "node_modules"), 0o700); err != nil {
		return err
	}
	lock := `{"lockfileVersion":3,"packages":{"":{"dependencies":{"@opencode-ai/plugin":"*"}}}}`
	return os.WriteFile(filepath.Join(dir, "package-lock.json"), []byte(lock), 0o600)
}

// agentBinaries are what each CLI runs from compat/node_modules.
var agentBinaries = []string{
	"node_modules/.bin/codex",
	"node_modules/@openai/codex-linux-x64/package.json",
	"node_modules/@anthropic-ai/claude-code-linux-x64/claude",
	"node_modules/@google/gemini-cli/bundle/gemini.js",
	"node_modules/opencode-linux-x64/bin/opencode",
}

// requireAgentCLIs skips without the CLIs (an older npm install), unless
// TURNPIKE_COMPAT=1 says this run must drive them.
func requireAgentCLIs(t *testing.T, dir string) {
	t.Helper()
	for _, b := range agentBinaries {
		if _, err := os.Stat(filepath.Join(dir, b)); err != nil {
			msg := fmt.Sprintf("the coding-agent CLIs need compat/%s (run: cd compat && npm ci): %v", b, err)
			if os.Getenv("TURNPIKE_COMPAT") == "1" {
				t.Fatal("TURNPIKE_COMPAT=1 but " + msg)
			}
			t.Skip(msg)
		}
	}
}

// outsideRecorder is the proxy every CLI is given: the CLIs that honour
// proxy variables send it whatever they try past the gateway (update
// checks, telemetry, plugin syncs), and it refuses and records each.
type outsideRecorder struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string
}

func startOutsideRecorder(t *testing.T) *outsideRecorder {
	o := &outsideRecorder{}
	o.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.mu.Lock()
		o.seen = append(o.seen, r.Method+" "+r.Host)
		o.mu.Unlock()
		http.Error(w, "no network in the compatibility suite", http.StatusForbidden)
	}))
	t.Cleanup(o.Close)
	return o
}

// report fails the test for any attempt to reach past the gateway.
func (o *outsideRecorder) report(t *testing.T) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.seen) > 0 {
		t.Errorf("the CLIs tried to reach past the gateway (telemetry or updates not off?): %q", o.seen)
	}
}
