package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/testkit"
)

// TestConsoleInHeadlessChromium drives the real console in Chromium against
// the in-process gateway: sign in, create a key, chat three streamed turns
// in the playground, change parameters and see them upstream, stop and
// clear, create and test a channel, upload a broken plugin, manage a valid
// one (versions, activation, enable, runtime, dry run, marketplace), see a
// user's tasks, delete the plugin, visit every page.
func TestConsoleInHeadlessChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("browser tests skipped in -short mode")
	}
	bin := requireChromium(t)
	up := newFakeUpstream(t)
	gw := startGateway(t, up.URL)
	ps := &pluginScenario{gw: gw, vendor: newFakeVendor(t), market: newFakeMarketplace(t)}
	b := launchBrowser(t, bin)
	p := b.newPage(t)

	steps := []struct {
		name string
		run  func(p *page)
	}{
		{"log in", func(p *page) { logIn(p, gw.URL) }},
		{"create an API key shown once", createKey},
		{"chat three streamed turns", func(p *page) { chatThreeTurns(p, up) }},
		{"stop and clear", stopAndClear},
		{"create and test a channel", func(p *page) { createChannel(p, gw) }},
		{"price a model with reasoning and long-context tiers", func(p *page) { priceWithTiers(p, gw) }},
		{"upload a broken plugin", uploadBrokenPlugin},
		{"upload a valid plugin", ps.uploadValid},
		{"upload and activate a second version", ps.secondVersion},
		{"disable and re-enable the plugin", ps.disableEnable},
		{"a conflicting plugin is held back", ps.heldBack},
		{"see the plugin's routes in the runtime status", ps.runtime},
		{"dry run a hook", ps.dryRun},
		{"install from a marketplace", ps.marketplace},
		{"a user sees its tasks", ps.userTasks},
		{"delete the plugin", ps.deletePlugin},
		{"visit every page", visitPages},
		{"the administration pages in Chinese", adminPagesInChinese},
		{"log out", func(p *page) {
			p.click("#logout")
			p.waitVisible("#login-submit")
		}},
	}
	// Each step starts where the previous one left the page, so the first
	// failure ends the scenario instead of cascading into timeouts.
	for _, s := range steps {
		if !t.Run(s.name, func(t *testing.T) { p.t = t; s.run(p) }) {
			return
		}
	}
	if probs := b.Problems(); len(probs) > 0 {
		t.Errorf("the page reported script errors: %v", probs)
	}
}

func openPage(p *page, module string) {
	p.t.Helper()
	p.click("#nav-" + module)
	p.waitFor(fmt.Sprintf(`document.querySelector('main[data-page=%q]') && !document.querySelector("main[aria-busy]")`, module), module+" page")
}

func submitDialog(p *page) {
	p.t.Helper()
	p.click("dialog[open] button[type=submit]")
}

func logIn(p *page, base string) {
	p.navigate(base + "/")
	p.waitVisible("#login-submit")
	p.screenshot("login")
	p.fill("input[name=username]", "root")
	p.fill("input[name=password]", "not-the-password")
	p.click("#login-submit")
	p.waitFor(`document.querySelector("[role=alert]").textContent.includes("wrong username or password")`, "the server's refusal")
	p.fill("input[name=password]", rootPassword)
	p.click("#login-submit")
	p.waitVisible("#whoami")
	p.waitFor(`document.querySelector("#stat-quota") && document.querySelector("#stat-quota").textContent !== "0"`, "the dashboard balance")
}

func createKey(p *page) {
	openPage(p, "keys")
	p.click("#key-create")
	p.waitVisible("dialog[open] input[name=name]")
	submitDialog(p) // empty: the browser must refuse before sending
	p.waitFor(`document.querySelector("dialog[open] .field-error").textContent.length > 0`, "the required-field message")
	p.fill("dialog[open] input[name=name]", "ci-key")
	p.fill("dialog[open] input[name=models]", chatModel)
	submitDialog(p)
	p.waitVisible("#new-key")
	key := p.text("#new-key")
	if !strings.HasPrefix(key, "sk-") || len(key) < 30 {
		p.t.Fatalf("the new key %q does not look like a whole key", key)
	}
	p.click("dialog[open] button.copy")
	p.waitFor(`document.querySelector("dialog[open] button.copy").textContent === "Copied"`, "the copy confirmation")
	p.screenshot("keys-created")
	p.click("dialog[open] .dialog-actions button")
	p.waitFor(`!document.querySelector("dialog[open]")`, "the key dialog to close")
	list := p.text("#keys-list")
	if !strings.Contains(list, "ci-key") || strings.Contains(list, key) {
		p.t.Fatalf("the key list should show ci-key masked, got %q", list)
	}
	p.screenshot("keys")
	setKeyLimits(p)
}

// setKeyLimits gives ci-key a rate limit and a daily budget through its
// Limits dialog and checks the list shows both.
func setKeyLimits(p *page) {
	p.click(`button[aria-label="Limits of key ci-key"]`)
	p.waitVisible("dialog[open] input[name=rpm]")
	p.fill("dialog[open] input[name=rpm]", "600")
	p.fill("dialog[open] input[name=period_quota]", "1800") // dollars, the form's default unit
	submitDialog(p)                                         // no period: the form must ask for one
	p.waitFor(`document.querySelector("dialog[open] .field-error") && [...document.querySelectorAll("dialog[open] .field-error")].some((e) => e.textContent.includes("period"))`, "the period message")
	p.must("Runtime.evaluate", map[string]any{"expression": `(() => { const s = document.querySelector("dialog[open] select[name=period]"); s.value = "month"; s.dispatchEvent(new Event("change", { bubbles: true })); })()`})
	submitDialog(p)
	p.waitFor(`!document.querySelector("dialog[open]")`, "the limits dialog to close")
	p.waitFor(`document.querySelector("#keys-list").textContent.includes("600 rpm") && document.querySelector("#keys-list").textContent.includes("per month") && document.querySelector("#keys-list").textContent.includes("900,000,000 ($1,800.00)")`, "the key's limits in the list")
	p.screenshot("keys-limits")
}

// chooseModel selects the test model whether the playground offers a list
// or (without GET /pg/models) a free-text field.
func chooseModel(p *page) {
	p.waitVisible("#pg-model")
	var tag string
	if err := p.eval(`document.querySelector("#pg-model").tagName`, &tag); err != nil {
		p.t.Fatal(err)
	}
	if tag == "SELECT" {
		p.waitFor(fmt.Sprintf(`[...document.querySelector("#pg-model").options].some(o => o.value === %q)`, chatModel), "the model list")
		if err := p.eval(fmt.Sprintf(`document.querySelector("#pg-model").value = %q`, chatModel), nil); err != nil {
			p.t.Fatal(err)
		}
		return
	}
	p.fill("#pg-model", chatModel)
}

// streamingText is the text of the answer still streaming, or "".
const streamingText = `(document.querySelector(".msg.assistant.streaming .body") || {}).textContent || ""`

// awaitStreamedAnswer checks that part of the answer is on screen before the
// stream ends, then waits for the whole answer.
func awaitStreamedAnswer(p *page, want string) {
	p.t.Helper()
	partial := p.waitText(streamingText, "the first streamed piece")
	p.waitFor(`!document.querySelector(".msg.streaming") && document.querySelector("#pg-send:not([disabled])")`, "the end of the stream")
	var last string
	if err := p.eval(`[...document.querySelectorAll(".msg.assistant .body")].pop().textContent`, &last); err != nil {
		p.t.Fatal(err)
	}
	if last != want {
		p.t.Fatalf("answer = %q, want %q (page: %.400s)", last, want, p.bodyText())
	}
	if partial == "" || len(partial) >= len(want) || !strings.HasPrefix(want, partial) {
		p.t.Fatalf("no partial answer was visible while streaming: saw %q before the end", partial)
	}
}

func chatThreeTurns(p *page, up *fakeUpstream) {
	openPage(p, "playground")
	chooseModel(p)
	answers := make([]string, 3)
	for i := range answers {
		answers[i] = strings.Join(answerFor(i+1), "")
	}

	p.fill("#pg-prompt", "Hello there")
	p.click("#pg-send")
	awaitStreamedAnswer(p, answers[0])

	// Change parameters with the keyboard, as a person without a mouse would.
	if err := p.eval(`document.querySelector('[data-param="temperature"]').focus()`, nil); err != nil {
		p.t.Fatal(err)
	}
	p.key("ArrowLeft")
	p.key("ArrowLeft")
	p.fill("#pg-max-tokens", "64")
	p.fill("#pg-prompt", "Tell me more")
	p.key("Enter")
	awaitStreamedAnswer(p, answers[1])

	p.fill("#pg-prompt", "And finally?")
	p.click("#pg-send")
	p.waitFor(`(document.querySelector(".msg.assistant.streaming .body") || {}).textContent`, "the third answer to start")
	p.screenshot("playground")
	awaitStreamedAnswer(p, answers[2])

	chats := up.chats()
	if len(chats) != 3 {
		p.t.Fatalf("the upstream saw %d streamed requests, want 3", len(chats))
	}
	if v, _ := chats[0]["temperature"].(float64); v != 0.7 {
		p.t.Errorf("first turn temperature = %v, want the default 0.7", chats[0]["temperature"])
	}
	for _, c := range chats[1:] {
		if v, _ := c["temperature"].(float64); v != 0.5 {
			p.t.Errorf("temperature after two ArrowLeft presses = %v, want 0.5", c["temperature"])
		}
		mt, ok := c["max_tokens"].(float64)
		if !ok {
			mt, _ = c["max_completion_tokens"].(float64)
		}
		if mt != 64 {
			p.t.Errorf("max tokens upstream = %v, want 64 (body %v)", mt, c)
		}
	}
	msgs, _ := chats[2]["messages"].([]any)
	var roles []string
	for _, m := range msgs {
		roles = append(roles, fmt.Sprint(m.(map[string]any)["role"]))
	}
	if strings.Join(roles, ",") != "user,assistant,user,assistant,user" {
		p.t.Fatalf("third turn sent roles %v, want the whole conversation", roles)
	}
	if got := fmt.Sprint(msgs[3].(map[string]any)["content"]); got != answers[1] {
		p.t.Errorf("the second answer was sent back as %q, want %q", got, answers[1])
	}
}

func stopAndClear(p *page) {
	p.fill("#pg-prompt", "A long story, please")
	p.click("#pg-send")
	p.waitFor(`(document.querySelector(".msg.assistant.streaming .body") || {}).textContent`, "the fourth answer to start")
	p.click("#pg-stop")
	p.waitFor(`document.querySelector("#pg-status").textContent === "Stopped."`, "the stream to stop")
	var last string
	if err := p.eval(`[...document.querySelectorAll(".msg.assistant .body")].pop().textContent`, &last); err != nil {
		p.t.Fatal(err)
	}
	if last == strings.Join(answerFor(4), "") {
		p.t.Fatalf("Stop did not interrupt the stream: the whole answer arrived")
	}
	p.click("#pg-clear")
	p.waitFor(`document.querySelectorAll("#pg-messages .msg").length === 0`, "the conversation to clear")
}

func createChannel(p *page, gw *testkit.Gateway) {
	openPage(p, "channels")
	p.click("#channel-create")
	p.waitVisible("dialog[open] input[name=name]")
	p.fill("dialog[open] input[name=name]", "fake-openai")
	submitDialog(p) // no models yet: refused in the browser
	p.waitFor(`document.querySelector("dialog[open] textarea[name=models]").closest(".field").querySelector(".field-error").textContent.length > 0`, "the models validation message")
	p.fill("dialog[open] input[name=base_url]", baseURLOfSeed(p))
	// Two keys, one per line.
	p.fill("dialog[open] textarea[name=key]", secondKeys[0]+"\n"+secondKeys[1])
	p.fill("dialog[open] textarea[name=models]", chatModel)
	submitDialog(p) // the name is taken: the server refuses and says why
	p.waitFor(`document.querySelector("dialog[open] [role=alert]").textContent.includes("already exists")`, "the server's conflict message")
	p.fill("dialog[open] input[name=name]", "backup-openai")
	submitDialog(p)
	p.waitFor(`!document.querySelector("dialog[open]") && document.querySelector("#channels-list").textContent.includes("backup-openai")`, "the new channel in the list")
	p.click(`[aria-label="Test channel backup-openai"]`)
	p.waitFor(`document.querySelector("#toasts").textContent.includes("backup-openai: OK in")`, "a successful channel test")
	reenableKey(p, gw)
	p.screenshot("channels")
	p.click(`[aria-label="Edit channel backup-openai"]`)
	p.waitVisible("dialog[open] #channel-discover")
	p.click("dialog[open] #channel-discover")
	p.waitFor(`document.querySelector("dialog[open] textarea[name=models]").value.includes("listed-by-provider")`, "the provider's models in the list")
	p.click(`dialog[open] .dialog-actions button:not(.primary)`)
	p.waitFor(`!document.querySelector("dialog[open]")`, "the dialog to close")
}

// secondKeys are the provider keys of the channel the console creates.
var secondKeys = [2]string{"another-upstream-key-0000", "refused-upstream-key-1111"}

// reenableKey takes key 1 of backup-openai out as a 401 from the provider
// would, then checks the page lists both keys masked with their states and
// that its Re-enable button brings key 1 back.
func reenableKey(p *page, gw *testkit.Gateway) {
	p.t.Helper()
	var id int64
	if err := p.eval(`fetch("/api/channels").then(r => r.json()).then(d => d.items.find(c => c.name === "backup-openai").id)`, &id); err != nil {
		p.t.Fatal(err)
	}
	ch := gw.App.Router.Table().Channel(id)
	if ch == nil || ch.KeyCount() != 2 {
		p.t.Fatalf("the routing table does not hold the channel's two keys: %+v", ch)
	}
	gw.App.Router.Health.Report(ch.WithKey(1), 1, &ir.Error{UpstreamStatus: 401, Message: "Incorrect API key provided"})
	openPage(p, "dashboard")
	openPage(p, "channels")
	const list = `document.querySelector('ul[aria-label="Keys of channel backup-openai"]')`
	p.waitFor(list+` && `+list+`.querySelector('li[data-key-index="1"]').dataset.state === "auto_disabled"`, "key 1 listed as auto-disabled")
	text := p.text(`ul[aria-label="Keys of channel backup-openai"]`)
	if !strings.Contains(text, "#0 anot...0000") || !strings.Contains(text, "#1 refu...1111") || !strings.Contains(text, "401") {
		p.t.Fatalf("the key list should show each key masked with its state, got %q", text)
	}
	for _, k := range secondKeys {
		if strings.Contains(p.bodyText(), k) {
			p.t.Fatalf("the page shows a whole provider key: %q", k)
		}
	}
	p.screenshot("channels-keys")
	p.click(`[aria-label="Re-enable key 1 of channel backup-openai"]`)
	p.waitFor(`document.querySelector("#toasts").textContent.includes("Key 1 re-enabled")`, "the re-enable confirmation")
	p.waitFor(`!document.querySelector('ul[aria-label="Keys of channel backup-openai"] [data-state="auto_disabled"]')`, "key 1 healthy again")
	if !gw.App.Router.Health.Routable(id, 1) {
		p.t.Fatal("key 1 is still out of routing after Re-enable")
	}
}

// priceWithTiers adds a price with a reasoning price and two tiers through
// the tier editor (refusing a repeated threshold in the browser, removing
// a blank row), then removes a tier when editing it again; the admin API
// must hold what the form showed.
func priceWithTiers(p *page, gw *testkit.Gateway) {
	const model = "tiered-model"
	row := func(n int, name string) string {
		return fmt.Sprintf("dialog[open] .tier-row:nth-child(%d) input[name=tier-%s]", n, name)
	}
	openPage(p, "models")
	p.click("#model-create")
	p.waitVisible("dialog[open] input[name=name]")
	p.fill("dialog[open] input[name=name]", model)
	p.fill("dialog[open] input[name=input_per_mtok]", "1.25")
	p.fill("dialog[open] input[name=output_per_mtok]", "10")
	p.fill("dialog[open] input[name=reasoning_per_mtok]", "12")
	p.click("#tier-add")
	p.fill(row(1, "above_input_tokens"), "200000")
	p.fill(row(1, "input_per_mtok"), "2.5")
	p.click("#tier-add")
	p.fill(row(2, "above_input_tokens"), "200000")
	p.fill(row(2, "output_per_mtok"), "15")
	submitDialog(p) // the same threshold twice: refused in the browser
	p.waitFor(`[...document.querySelectorAll("dialog[open] .field-error")].some((e) => e.textContent.includes("Tier 2 repeats the threshold of tier 1"))`,
		"the repeated-threshold message")
	p.fill(row(2, "above_input_tokens"), "1000000")
	p.click("#tier-add") // a blank third row, removed again
	p.click(`dialog[open] button[aria-label="Remove tier 3"]`)
	p.waitFor(`document.querySelectorAll("dialog[open] .tier-row").length === 2`, "the blank tier removed")
	submitDialog(p)
	p.waitFor(`!document.querySelector("dialog[open]") && document.querySelector("#models-list").textContent.includes("> 200,000: in 2.5")`,
		"the tiers in the price list")
	var saved struct {
		Reasoning float64          `json:"reasoning_per_mtok"`
		Tiers     []map[string]any `json:"tiers"`
	}
	rootAPI(p.t, gw, "GET", "/api/models/"+model, nil, &saved)
	want := `[map[above_input_tokens:200000 input_per_mtok:2.5] map[above_input_tokens:1e+06 output_per_mtok:15]]`
	if saved.Reasoning != 12 || fmt.Sprint(saved.Tiers) != want {
		p.t.Fatalf("saved reasoning %v tiers %v, want 12 and %s", saved.Reasoning, saved.Tiers, want)
	}
	p.click(`[aria-label="Edit price of tiered-model"]`)
	p.waitFor(`document.querySelectorAll("dialog[open] .tier-row").length === 2`, "the saved tiers in the form")
	p.eval(`document.querySelector("dialog[open] fieldset.tiers").scrollIntoView({block: "center"})`, nil)
	p.screenshot("models-tiers")
	p.click(`dialog[open] button[aria-label="Remove tier 1"]`)
	submitDialog(p)
	p.waitFor(`!document.querySelector("dialog[open]") && !document.querySelector("#models-list").textContent.includes("> 200,000: in 2.5")`,
		"the removed tier gone from the list")
	saved.Tiers = nil
	rootAPI(p.t, gw, "GET", "/api/models/"+model, nil, &saved)
	if want := `[map[above_input_tokens:1e+06 output_per_mtok:15]]`; fmt.Sprint(saved.Tiers) != want {
		p.t.Fatalf("tiers after removing one: %v, want %s", saved.Tiers, want)
	}

	// Routing choices: a longer affinity and the latency strategy.
	p.click(`[aria-label="Edit price of tiered-model"]`)
	p.waitVisible("dialog[open] input[name=affinity_ttl]")
	p.fill("dialog[open] input[name=affinity_ttl]", "3600")
	p.must("Runtime.evaluate", map[string]any{"expression": `(() => { const s = document.querySelector("dialog[open] select[name=strategy]"); s.value = "latency"; s.dispatchEvent(new Event("change", { bubbles: true })); })()`})
	submitDialog(p)
	p.waitFor(`!document.querySelector("dialog[open]")`, "the routing choices saved")
	var routed struct {
		Affinity struct {
			Enabled    bool `json:"enabled"`
			TTLSeconds int  `json:"ttl_seconds"`
		} `json:"affinity"`
		Routing struct {
			Strategy string `json:"strategy"`
		} `json:"routing"`
	}
	rootAPI(p.t, gw, "GET", "/api/models/"+model, nil, &routed)
	if !routed.Affinity.Enabled || routed.Affinity.TTLSeconds != 3600 || routed.Routing.Strategy != "latency" {
		p.t.Fatalf("routing choices saved as %+v", routed)
	}
}

// baseURLOfSeed reads the seeded channel's base URL through the admin API
// the page itself uses, so the new channel points at the same fake upstream.
func baseURLOfSeed(p *page) string {
	var u string
	if err := p.eval(`fetch("/api/channels").then(r => r.json()).then(d => d.items.find(c => c.name === "fake-openai").base_url)`, &u); err != nil {
		p.t.Fatal(err)
	}
	return u
}

func uploadBrokenPlugin(p *page) {
	openPage(p, "plugins")
	p.waitFor(contains("#plugins-list", "No plugins installed yet"), "the empty plugin list")
	p.screenshot("plugins-empty")
	p.click("#plugins-list button.primary") // the empty state's "Upload a plugin"
	p.waitFor(`document.querySelector("#tab-upload").getAttribute("aria-selected") === "true" && location.hash === "#upload"`, "the upload tab")
	const broken = `export const meta = { apiVersion: 1, key: "Broken Key!", version: "not-semver" };`
	setFile(p, "#panel-upload input[type=file][name=file]", "plugin.js", broken)
	p.click("#plugin-upload")
	p.waitFor(`document.querySelector("#plugin-upload-error").textContent.length > 0`, "the upload error")
	var problems int
	if err := p.eval(`document.querySelectorAll("#plugin-upload-error li").length`, &problems); err != nil {
		p.t.Fatal(err)
	}
	msg := p.text("#plugin-upload-error")
	// The key and the version are both wrong and the hooks are missing:
	// every problem is listed, not only the first.
	if problems < 2 || !strings.Contains(msg, "not valid") || !strings.Contains(msg, "meta.key") {
		p.t.Fatalf("want every validation problem listed, got %d: %q", problems, msg)
	}
	p.screenshot("plugins")
}

func visitPages(p *page) {
	openPage(p, "logs")
	p.waitFor(fmt.Sprintf(`document.querySelector("#logs-list").textContent.includes(%q)`, chatModel), "the playground calls in the log")
	p.screenshot("logs")
	// A row's detail shows the request id and the routing timeline.
	var opened bool
	if err := p.eval(fmt.Sprintf(`(() => { const row = [...document.querySelectorAll("#logs-list tbody tr")].find((r) => r.textContent.includes(%q));
		if (!row) return false; row.querySelector("button[aria-label^='Detail of log entry']").click(); return true; })()`, chatModel), &opened); err != nil || !opened {
		p.t.Fatalf("no Detail button on a %s row (%v)", chatModel, err)
	}
	p.waitFor(`document.querySelector("dialog ol.timeline li") !== null && document.querySelector("dialog dl.log-facts code") !== null`,
		"the log detail with its attempts")
	// A call of a group that logs content shows its request and answer.
	p.waitFor(`document.querySelectorAll("dialog #log-content pre.log-content").length === 2 &&
		document.querySelector("dialog #log-content pre.log-content").textContent.includes("messages")`, "the log detail's content")
	p.screenshot("log-detail")
	p.click("dialog .dialog-actions button")
	openPage(p, "tasks")
	p.waitFor(`document.querySelector("#tasks-list").textContent.length > 0`, "the task list or its empty state")
	p.screenshot("tasks")
	openPage(p, "batches")
	p.waitFor(`document.querySelector("#batches-list").textContent.length > 0 && document.querySelector("#files-list").textContent.length > 0`,
		"the batch and file lists or their empty states")
	p.screenshot("batches")
	openPage(p, "users")
	p.waitFor(`document.querySelector("#users-list").textContent.includes("root")`, "the user list")
	p.screenshot("users")
	openPage(p, "models")
	p.waitFor(fmt.Sprintf(`document.querySelector("#models-list").textContent.includes(%q)`, chatModel), "the price list")
	p.screenshot("models")
	openPage(p, "groups")
	p.waitFor(`document.querySelector("#groups-list").textContent.includes("vip")`, "the group list")
	p.screenshot("groups")
	openPage(p, "dashboard")
	p.waitVisible(".chart svg")
	p.screenshot("dashboard")
	p.click("#theme-toggle")
	p.waitFor(`document.documentElement.dataset.theme === "dark"`, "the dark theme")
	time.Sleep(50 * time.Millisecond)
	p.screenshot("dashboard-dark")
	openPage(p, "playground")
	p.screenshot("playground-dark")
	openPage(p, "tasks")
	p.waitFor(contains("#tasks-list", "FAILURE"), "the task list")
	p.screenshot("tasks-dark")
	openPage(p, "plugins")
	p.waitFor(`document.querySelector("#plugin-echo")`, "the installed plugins")
	p.screenshot("plugins-dark")
	p.click("#theme-toggle")
}

// adminPagesInChinese switches the console to Chinese and checks the pages
// translated last speak it, from their headings to their table cells.
func adminPagesInChinese(p *page) {
	selectLang(p, "zh")
	p.waitFor(`document.querySelector("#nav-dashboard") && document.querySelector("#nav-dashboard").textContent === "仪表盘"`, "the Chinese navigation")
	for _, c := range []struct{ module, list, want, shot string }{
		{"keys", "#keys-list", "每月", "keys-zh"},
		{"users", "#users-list", "超级管理员", "users-zh"},
		{"channels", "#channels-list", "健康", "channels-zh"},
		{"models", "#models-list", "备用模型", "models-zh"},
		{"plugins", "#plugins-list", "当前版本", "plugins-zh"},
	} {
		openPage(p, c.module)
		p.waitFor(contains(c.list, c.want), "the "+c.module+" page in Chinese")
		p.screenshot(c.shot)
	}
	selectLang(p, "en")
	p.waitFor(`document.querySelector("#nav-dashboard").textContent === "Dashboard"`, "the English navigation")
}
