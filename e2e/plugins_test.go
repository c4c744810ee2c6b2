package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/turnpike-gw/turnpike/internal/testkit"
)

// pluginScenario is the task plugin part of the browser test: root manages
// the Acme plugin through the console, a user's key runs tasks through it,
// and the plugin is finally deleted.
type pluginScenario struct {
	gw        *testkit.Gateway
	vendor    *fakeVendor
	market    string
	channelID int64
	tasks     map[string]string // prompt → task id
}

// setFile puts a file into a file input as if the user had picked it.
func setFile(p *page, selector, name, content string) {
	p.t.Helper()
	data, _ := json.Marshal(content)
	js := fmt.Sprintf(`(() => { const dt = new DataTransfer(); dt.items.add(new File([%s], %q, {type: "text/javascript"}));
		const input = document.querySelector(%q); input.files = dt.files;
		input.dispatchEvent(new Event("change", {bubbles: true})); })()`, data, name, selector)
	if err := p.eval(js, nil); err != nil {
		p.t.Fatal(err)
	}
}

func readTestFile(p *page, path string) string {
	p.t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		p.t.Fatal(err)
	}
	return string(src)
}

// secondRelease derives version 1.1.0 of the pertask plugin from 1.0.0:
// the same key, a description, and one more query route, so activating it
// visibly changes what the runtime serves.
func secondRelease(p *page, src string) string {
	p.t.Helper()
	out := strings.Replace(src, `version: "1.0.0",`,
		`version: "1.1.0",`+"\n"+`  description: { en: "Acme text to video, second release" },`, 1)
	queryRoute := `{ method: "GET", path: "/acme/v1/videos/:task_id", type: "query", render: "renderTask" },`
	out = strings.Replace(out, queryRoute,
		queryRoute+"\n"+`    { method: "GET", path: "/acme/v1/jobs/:task_id", type: "query", render: "renderTask" },`, 1)
	if out == src || !strings.Contains(out, "/acme/v1/jobs/") {
		p.t.Fatal("the pertask fixture changed shape; update secondRelease")
	}
	return out
}

func openTab(p *page, id string) {
	p.t.Helper()
	p.click("#tab-" + id)
	// The tab reloads its content when shown; wait for that to finish so a
	// click never lands on content about to be replaced.
	p.waitFor(fmt.Sprintf(`document.querySelector("#tab-%s").getAttribute("aria-selected") === "true" && !document.querySelector("#panel-%s [aria-busy]")`, id, id), id+" tab")
}

// confirm presses the dangerous button of the open confirmation dialog.
func confirm(p *page) {
	p.t.Helper()
	p.click("dialog[open] button.danger")
	p.waitFor(`!document.querySelector("dialog[open]")`, "the confirmation to close")
}

// contains is a JS condition: the element's text includes every string.
func contains(selector string, texts ...string) string {
	var conds []string
	for _, s := range texts {
		conds = append(conds, fmt.Sprintf(`(document.querySelector(%q) || {textContent: ""}).textContent.includes(%q)`, selector, s))
	}
	return strings.Join(conds, " && ")
}

func uploadFile(p *page, name, content string) {
	p.t.Helper()
	openTab(p, "upload")
	setFile(p, "#panel-upload input[type=file][name=file]", name, content)
	p.click("#plugin-upload")
	p.waitFor(`document.querySelector("#plugin-upload-ok").textContent || document.querySelector("#plugin-upload-error").textContent`, "the upload answer")
	if msg := p.text("#plugin-upload-error"); msg != "" {
		p.t.Fatalf("the upload of %s was refused: %s", name, msg)
	}
}

func (s *pluginScenario) uploadValid(p *page) {
	openPage(p, "plugins")
	uploadFile(p, "plugin.js", readTestFile(p, "../internal/task/testdata/pertask.js"))
	p.waitFor(contains("#plugin-upload-ok", "Stored acme 1.0.0.", "active and enabled"), "the stored first version")
	openTab(p, "installed")
	p.waitFor(contains("#plugin-acme", "Acme Video", "active 1.0.0", "enabled", "acme-v1"), "the plugin card")
}

func (s *pluginScenario) secondVersion(p *page) {
	uploadFile(p, "plugin.js", secondRelease(p, readTestFile(p, "../internal/task/testdata/pertask.js")))
	p.waitFor(contains("#plugin-upload-ok", "Stored acme 1.1.0.", "not active"), "the stored second version")
	openTab(p, "installed")
	p.waitFor(`document.querySelector('#plugin-acme tr[data-version="1.1.0"]')`, "the second version in the list")
	if !strings.Contains(p.text("#plugin-acme .badges"), "active 1.0.0") {
		p.t.Fatalf("uploading without activate changed the active version: %q", p.text("#plugin-acme .badges"))
	}
	p.click(`[aria-label="Activate acme 1.1.0"]`)
	p.waitFor(contains("#plugin-acme .badges", "active 1.1.0"), "1.1.0 to become active")
	p.waitFor(`document.querySelector('[aria-label="Activate acme 1.0.0"]')`, "1.0.0 to be offered for activation")
	p.click(`[aria-label="Source of acme 1.1.0"]`)
	p.waitFor(contains("#plugin-source", `version: "1.1.0"`, "/acme/v1/jobs/:task_id"), "the stored source")
	p.click("dialog[open] .dialog-actions button")
	p.waitFor(`!document.querySelector("dialog[open]")`, "the source dialog to close")
}

func (s *pluginScenario) disableEnable(p *page) {
	p.click(`[aria-label="Disable plugin acme"]`)
	p.waitFor(contains("#plugin-acme .badges", "disabled"), "the disabled badge")
	p.click(`[aria-label="Enable plugin acme"]`)
	p.waitFor(contains("#plugin-acme .badges", "enabled")+` && !`+contains("#plugin-acme .badges", "disabled"), "the enabled badge")
	p.screenshot("plugins-installed")
}

// heldBack uploads a plugin whose native route clashes with Acme's: it is
// refused with every conflict listed, stored with force but held back, and
// enabling it again offers the forced retry. Then it is deleted.
func (s *pluginScenario) heldBack(p *page) {
	uploadFile := func() {
		p.t.Helper()
		setFile(p, "#panel-upload input[type=file][name=file]", "plugin.js", readTestFile(p, "../internal/plugin/testdata/per_task.js"))
		p.click("#plugin-upload")
	}
	openTab(p, "upload")
	uploadFile()
	p.waitFor(contains("#plugin-upload-error", "conflicts with installed plugins", "/acme/v1/videos"), "the conflict refusal")
	p.click("#panel-upload input[name=force]")
	uploadFile()
	p.waitFor(contains("#plugin-upload-ok", "Stored acme-video 1.0.0.", "held back"), "the forced upload")
	openTab(p, "installed")
	p.waitFor(contains("#plugin-acme-video .badges", "held back"), "the held-back badge")
	p.click(`[aria-label="Retry enable plugin acme-video"]`)
	p.waitFor(contains("#plugin-error-acme-video", "conflicts with installed plugins", "/acme/v1/videos"), "the conflict that still holds it back")
	if strings.Contains(p.text("#plugin-error-acme-video"), "Do it anyway") {
		p.t.Fatal("forcing a plugin that is already held back changes nothing and should not be offered")
	}
	// Disabled, then enabled again: now the forced retry is offered, and
	// taking it holds the plugin back once more.
	p.click(`[aria-label="Disable plugin acme-video"]`)
	p.waitFor(contains("#plugin-acme-video .badges", "disabled"), "the disabled conflicting plugin")
	p.click(`[aria-label="Enable plugin acme-video"]`)
	p.waitFor(contains("#plugin-error-acme-video", "Do it anyway"), "the offer to force")
	p.screenshot("plugins-held-back")
	p.click("#plugin-error-acme-video button")
	p.waitFor(contains("#plugin-acme-video .badges", "held back"), "the plugin held back again")
	p.click(`[aria-label="Delete plugin acme-video"]`)
	confirm(p)
	p.waitFor(`!document.querySelector("#plugin-acme-video")`, "the held-back plugin to go")
}

func (s *pluginScenario) runtime(p *page) {
	openTab(p, "runtime")
	p.waitFor(contains("#runtime-plugins", "acme", "1.1.0", "POST /acme/v1/videos", "GET /acme/v1/jobs/:task_id"), "the live routes of 1.1.0")
	p.waitFor(contains("#runtime-summary", "Generation", "up to date"), "the generation summary")
	p.screenshot("plugins-runtime")
	// The tabs follow the ARIA pattern: arrow keys move between them.
	p.key("ArrowLeft")
	p.waitFor(`document.activeElement.id === "tab-dry-run" && !document.querySelector("#panel-dry-run").hidden && document.querySelector("#panel-runtime").hidden`, "ArrowLeft to select the previous tab")
}

func (s *pluginScenario) dryRun(p *page) {
	openTab(p, "dry-run")
	setFile(p, "#dry-run-file", "plugin.js", readTestFile(p, "../internal/task/testdata/pertask.js"))
	p.waitFor(`document.querySelector("#panel-dry-run textarea[name=source]").value.includes("Acme Video")`, "the source loaded from the file")
	p.fill("#panel-dry-run input[name=hook]", "native.decodeSubmit")
	p.fill("#panel-dry-run textarea[name=args]", `[{"body": {"kind": "json", "value": {"model": "acme-v1", "prompt": "a cat"}}}]`)
	p.click("#dry-run")
	p.waitFor(contains("#dry-run-hook-result", `"kind": "submit"`, `"model": "acme-v1"`), "the hook's result")
	p.screenshot("plugins-dry-run")
	p.fill("#panel-dry-run textarea[name=args]", `[{"body": {"kind": "json", "value": {}}}]`)
	p.click("#dry-run")
	p.waitFor(contains("#dry-run-hook-error", "model is required"), "the hook's error")
}

func (s *pluginScenario) marketplace(p *page) {
	openTab(p, "marketplace")
	p.fill("#panel-marketplace input[name=url]", s.market)
	p.click("#market-add")
	p.waitFor(contains("#market-catalogue", "Echo Images", "echo"), "the catalogue of the new source")
	p.click(`[aria-label="Install echo"]`)
	p.waitFor(contains("#market-catalogue", "active 0.3.0"), "echo shown as installed")
	p.screenshot("plugins-marketplace")
	openTab(p, "installed")
	p.waitFor(contains("#plugin-echo", "active 0.3.0", "enabled"), "the installed echo plugin")
}

// userTasks binds a channel to the plugin, submits three tasks with the
// user's key and checks that the user sees them, with status, progress and
// failure reason, on the Tasks page.
func (s *pluginScenario) userTasks(p *page) {
	var ch struct {
		ID int64 `json:"id"`
	}
	rootAPI(p.t, s.gw, "POST", "/api/channels", map[string]any{"name": "acme-video", "type": "task_plugin",
		"base_url": s.vendor.URL, "key": vendorSecret, "models": []string{videoModel},
		"settings": map[string]any{"task_plugin_key": "acme"}}, &ch)
	s.channelID = ch.ID
	s.tasks = map[string]string{}
	for _, prompt := range []string{"a cat on a skateboard", promptDone, promptRefuse} {
		s.tasks[prompt] = submitTask(p.t, s.gw, prompt)
	}
	s.waitForStatuses(p)

	p.click("#logout")
	p.waitVisible("#login-submit")
	signIn(p, userName, userPassword)
	openPage(p, "tasks")
	running, done, failed := s.tasks["a cat on a skateboard"], s.tasks[promptDone], s.tasks[promptRefuse]
	p.waitFor(contains("#tasks-list", running, done, failed, "IN_PROGRESS", "40%", "SUCCESS", "FAILURE", refusal, videoModel, "acme"),
		"the user's three tasks")
	p.screenshot("tasks-running")

	if err := p.eval(`(() => { const s = document.querySelector("select[name=status]"); s.value = "FAILURE"; s.dispatchEvent(new Event("change", {bubbles: true})); })()`, nil); err != nil {
		p.t.Fatal(err)
	}
	p.click("#tasks-apply")
	p.waitFor(contains("#tasks-list", failed)+` && !`+contains("#tasks-list", running), "only the failed task")
	p.fill("input[name=platform]", "no-such-plugin")
	p.click("#tasks-apply")
	p.waitFor(contains("#tasks-list", "No tasks match these filters."), "the empty filtered list")

	p.click("#logout")
	p.waitVisible("#login-submit")
	signIn(p, "root", rootPassword)
}

// waitForStatuses waits until the poller has moved every task to the state
// its prompt chooses, so the page is checked against settled data.
func (s *pluginScenario) waitForStatuses(p *page) {
	want := map[string]string{s.tasks["a cat on a skateboard"]: "IN_PROGRESS", s.tasks[promptDone]: "SUCCESS", s.tasks[promptRefuse]: "FAILURE"}
	got := map[string]string{}
	settled := testkit.WaitFor(10*time.Second, 100*time.Millisecond, func() bool {
		var list struct {
			Items []struct {
				TaskID string `json:"task_id"`
				Status string `json:"status"`
			} `json:"items"`
		}
		rootAPI(p.t, s.gw, "GET", "/api/tasks?platform=acme", nil, &list)
		got = map[string]string{}
		for _, it := range list.Items {
			got[it.TaskID] = it.Status
		}
		all := true
		for id, st := range want {
			all = all && got[id] == st
		}
		return all
	})
	if !settled {
		p.t.Fatalf("tasks did not settle: got %v, want %v", got, want)
	}
}

// deletePlugin first meets the 409 of a plugin that a channel still binds,
// then deletes that channel, an old version and the plugin from the UI.
func (s *pluginScenario) deletePlugin(p *page) {
	openPage(p, "plugins")
	p.click(`[aria-label="Delete plugin acme"]`)
	confirm(p)
	p.waitFor(contains("#plugin-error-acme", "still bound by channel", "acme-video"), "the in-use refusal")
	p.screenshot("plugins-in-use")

	openPage(p, "channels")
	p.click(`[aria-label="Delete channel acme-video"]`)
	confirm(p)
	p.waitFor(`!`+contains("#channels-list", "acme-video"), "the channel to go")

	openPage(p, "plugins")
	p.click(`[aria-label="Delete acme 1.0.0"]`)
	confirm(p)
	p.waitFor(`!document.querySelector('#plugin-acme tr[data-version="1.0.0"]')`, "the old version to go")
	p.click(`[aria-label="Delete plugin acme"]`)
	confirm(p)
	p.waitFor(`!document.querySelector("#plugin-acme") && document.querySelector("#plugin-echo")`, "the plugin to go")
}

// signIn fills the login form that is on screen.
func signIn(p *page, user, password string) {
	p.t.Helper()
	p.fill("input[name=username]", user)
	p.fill("input[name=password]", password)
	p.click("#login-submit")
	p.waitVisible("#whoami")
	p.waitFor(fmt.Sprintf(`document.querySelector("#whoami").textContent === %q`, user), "the signed-in user")
}
