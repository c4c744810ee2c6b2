package compat

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/testkit"
)

// agentTimeout bounds one CLI run: a few seconds each on a quiet machine,
// far more on a busy one (they are large programs that start slowly).
const agentTimeout = 180 * time.Second

// agentsAtOnce is how many CLIs run together: they wait mostly on starting
// up and on the gateway, but all nine at once starve two cores.
const agentsAtOnce = 4

// agentCase is one coding agent through one channel of another wire.
type agentCase struct {
	cli   string // key of agentCLIs
	wire  string // chat, messages or gemini: the channel's wire
	model string
	// signed: the fake signs the call and requires the signature back on
	// the next turn (messages-native thinking, alternate-native 3.x calls).
	signed bool
}

var agentCases = []agentCase{
	{"codex", "chat", "codex-via-chat", false},
	{"codex", "messages", "codex-via-messages", true},
	{"codex", "gemini", "gemini-3-codex", true},
	{"claude", "chat", "claude-via-chat", false},
	{"claude", "gemini", "gemini-3-claude", true},
	// Gemini CLI asks for an 8192-token thinking budget for this name, so
	// the messages channel runs with thinking and its signature must come
	// back on the call in the second turn.
	{"gemini", "chat", "gemini-cli-via-chat", false},
	{"gemini", "messages", "gemini-2.5-flash", true},
	{"opencode", "messages", "opencode-via-messages", false},
	{"opencode", "gemini", "gemini-3-opencode", true},
}

// agentTool is the tool each agent is made to call, the schema property the
// converted declaration must keep, and its arguments for a note at path.
func agentTool(cli, dir string) (tool, param string, args map[string]any) {
	note := filepath.Join(dir, "note.txt")
	switch cli {
	case "codex":
		return "exec_command", "cmd", map[string]any{"cmd": "cat note.txt"}
	case "claude":
		return "Read", "file_path", map[string]any{"file_path": note}
	case "gemini":
		return "read_file", "file_path", map[string]any{"file_path": note}
	default:
		return "read", "filePath", map[string]any{"filePath": note}
	}
}

func TestCodingAgentCLIsThroughOtherWires(t *testing.T) {
	dir, node := requireNode(t)
	requireAgentCLIs(t, dir)
	root := t.TempDir()
	outside := startOutsideRecorder(t)
	scripts := map[string][]agentScript{}
	for _, c := range agentCases {
		work := filepath.Join(root, c.model, "work")
		if err := os.MkdirAll(work, 0o755); err != nil {
			t.Fatal(err)
		}
		s := agentScript{model: c.model, secret: "tangerine-" + strings.ReplaceAll(c.model, ".", "-")}
		s.tool, s.param, s.args = agentTool(c.cli, work)
		if err := os.WriteFile(filepath.Join(work, "note.txt"), []byte("secret-word: "+s.secret+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		scripts[c.wire] = append(scripts[c.wire], s)
	}
	fakes := map[string]*agentFake{
		"chat":     startAgentFake(t, "openai", "agent-chat-key", agentChat{"agent-chat-key"}, scripts["chat"]...),
		"messages": startAgentFake(t, "anthropic", "agent-messages-key", agentMessages{"agent-messages-key"}, scripts["messages"]...),
		"gemini":   startAgentFake(t, "gemini", "agent-gemini-key", agentGemini{"agent-gemini-key"}, scripts["gemini"]...),
	}
	gw := testkit.Start(t, testkit.WithSeed(agentSeed(fakes)), testkit.WithRootToken(compatRoot))

	// The runs go agentsAtOnce at a time, whatever go test's -parallel is;
	// each case then checks its own run.
	cases := selectedAgentCases()
	runs := make([]agentResult, len(cases))
	var wg sync.WaitGroup
	slots := make(chan struct{}, agentsAtOnce)
	for _, i := range slowestFirst(cases) {
		c := cases[i]
		wg.Add(1)
		go func() {
			defer wg.Done()
			slots <- struct{}{}
			defer func() { <-slots }()
			runs[i] = runAgent(c, agentRun{compat: dir, node: node, gw: gw.URL, key: clientKey, model: c.model, proxy: outside.URL,
				work: filepath.Join(root, c.model, "work"), home: filepath.Join(root, c.model, "home"),
				prompt: "Read note.txt in this directory and tell me the secret word."})
		}()
	}
	wg.Wait()
	for i, c := range cases {
		t.Run(c.cli+"_to_"+c.wire, func(t *testing.T) { checkAgentRun(t, c, runs[i], fakes[c.wire]) })
	}
	outside.report(t)
	for _, f := range fakes {
		problems, _ := f.snapshot()
		for _, p := range problems {
			t.Errorf("refused by the upstream (the real API refuses it too): %s", p)
		}
	}
	checkAgentBilling(t, gw.App.Store, fakes)
}

// selectedAgentCases are all cases, or those TURNPIKE_AGENTS names
// (e.g. "codex_to_chat,claude_to_gemini") while working on some.
func selectedAgentCases() []agentCase {
	only := os.Getenv("TURNPIKE_AGENTS")
	if only == "" {
		return agentCases
	}
	var out []agentCase
	for _, c := range agentCases {
		if slices.Contains(strings.Split(only, ","), c.cli+"_to_"+c.wire) {
			out = append(out, c)
		}
	}
	return out
}

// slowestFirst orders the runs so the CLIs that start slowest (the largest
// programs) go first and the quick ones fill the slots they leave.
func slowestFirst(cases []agentCase) []int {
	cost := map[string]int{"opencode": 3, "gemini": 2, "claude": 1, "codex": 0}
	order := make([]int, len(cases))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cost[cases[b].cli] - cost[cases[a].cli] })
	return order
}

type agentResult struct {
	out  string
	err  error
	took time.Duration
	cpu  time.Duration // user + system: what the run costs whatever the load
}

func runAgent(c agentCase, r agentRun) agentResult {
	if err := os.MkdirAll(r.home, 0o700); err != nil {
		return agentResult{err: err}
	}
	ctx, cancel := context.WithTimeout(context.Background(), agentTimeout)
	defer cancel()
	cmd, err := agentCLIs[c.cli].command(ctx, r)
	if err != nil {
		return agentResult{err: err}
	}
	cmd.Dir = r.work
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err = cmd.Run()
	res := agentResult{out: out.String(), err: err, took: time.Since(start)}
	if ps := cmd.ProcessState; ps != nil {
		res.cpu = ps.UserTime() + ps.SystemTime()
	}
	return res
}

// checkAgentRun requires the CLI to have finished with the answer built
// from its tool's output, and a signed call's signature to have come back.
func checkAgentRun(t *testing.T, c agentCase, res agentResult, f *agentFake) {
	name := agentCLIs[c.cli].name
	t.Logf("%s ran %s in %s (%s of CPU)", name, c.model, res.took.Round(time.Millisecond), res.cpu.Round(time.Millisecond))
	if os.Getenv("TURNPIKE_AGENTS") != "" {
		t.Logf("output:\n%s", res.out)
	}
	s, _ := f.script(c.model)
	if res.err != nil || !strings.Contains(res.out, s.answer()) {
		t.Errorf("%s through a %s channel: exit %v, want the answer %q in its output:\n%s", name, c.wire, res.err, s.answer(), tail(res.out, 4000))
	}
	minted, replayed := f.signatures(c.model)
	switch {
	case c.signed && minted == "":
		t.Errorf("the %s fake signed no call for %s (the request asked for no thinking?)", c.wire, c.model)
	case c.signed && replayed != minted && replayed != geminiSkipSignature:
		t.Errorf("the call's signature %q came back as %q", minted, replayed)
	case c.signed:
		t.Logf("signature minted %q, replayed %q", minted, replayed)
	}
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

func agentSeed(fakes map[string]*agentFake) config.Seed {
	unlimited := int64(-1)
	weight := 1
	seed := config.Seed{
		Groups: map[string]float64{"default": 1},
		Users:  []config.SeedUser{{Username: "compat", Password: "compat-password", Role: "user", Group: "default", Quota: 100_000_000}},
		Tokens: []config.SeedToken{{Name: "compat-key", User: "compat", Key: clientKey, Quota: &unlimited}},
		Models: map[string]config.SeedPrice{},
	}
	for _, wire := range []string{"chat", "messages", "gemini"} {
		f := fakes[wire]
		var models []string
		for m := range f.scripts {
			models = append(models, m)
			seed.Models[m] = config.SeedPrice{InputPerMTok: inputPerMTok, OutputPerMTok: outputPerMTok}
		}
		slices.Sort(models)
		ch := config.SeedChannel{Name: "agents-" + wire, Type: f.kind, BaseURL: f.srv.URL,
			Key: f.key, Models: models, Groups: []string{"default"}, Weight: &weight, Status: "enabled"}
		if wire == "chat" {
			// An OpenAI channel would take Responses calls as they are;
			// this one is the chat wire only, as most compatible providers are.
			ch.Settings = map[string]any{"responses": "chat"}
		}
		seed.Channels = append(seed.Channels, ch)
	}
	return seed
}

// checkAgentBilling requires one consume row per upstream answer, each with
// the upstream's tokens and their exact price, and Codex's hosted tools named
// where a channel could not run them.
func checkAgentBilling(t *testing.T, st store.Store, fakes map[string]*agentFake) {
	t.Helper()
	ctx := context.Background()
	for _, c := range selectedAgentCases() {
		_, answered := fakes[c.wire].snapshot()
		want := answered[c.model]
		t.Logf("%s: %d upstream answers", c.model, want)
		if want < 2 {
			t.Errorf("%s: the upstream answered %d times, want the tool call and the answer at least", c.model, want)
			continue
		}
		rows := waitForRows(ctx, t, st, c.model, want)
		if len(rows) != want {
			t.Errorf("%s: %d consume rows for %d upstream answers", c.model, len(rows), want)
		}
		for _, r := range rows {
			if r.PromptTokens != fakeInputTokens || r.CompletionTokens != fakeOutputTokens || r.Quota != wantQuota {
				t.Errorf("%s: consume row %d billed %d in / %d out / quota %d, want %d / %d / %d (other: %s)", c.model, r.ID,
					r.PromptTokens, r.CompletionTokens, r.Quota, fakeInputTokens, fakeOutputTokens, wantQuota, r.Other)
			}
			if dropped := fmt.Sprint(otherOf(r)["dropped_tools"]); c.cli == "codex" && !strings.Contains(dropped, "web_search") {
				t.Errorf("%s: consume row %d does not name Codex's web_search in other.dropped_tools: %s", c.model, r.ID, r.Other)
			}
		}
	}
}
