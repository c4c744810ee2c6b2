package e2e

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestGuardrailsConsoleInHeadlessChromium drives the guardrails page: root
// creates a guardrail, dry runs a sample on it, a key's call is refused by
// it, and the usage log's detail says what fired (never the text); then
// the same in Chinese.
func TestGuardrailsConsoleInHeadlessChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("browser tests skipped in -short mode")
	}
	bin := requireChromium(t)
	up := newFakeUpstream(t)
	gw := startGateway(t, up.URL)
	b := launchBrowser(t, bin)
	p := b.newPage(t)
	steps := []struct {
		name string
		run  func(p *page)
	}{
		{"log in", func(p *page) { logIn(p, gw.URL) }},
		{"create a guardrail", createGuardrail},
		{"dry run a sample", func(p *page) { dryRunSample(p, "Blocked by no-cards.", "card × 1") }},
		{"a blocked call names the guardrail in the usage log", func(p *page) {
			blockedCall(p, gw.URL)
			guardrailInLog(p, "Guardrails", "at request")
		}},
		{"the same in Chinese", func(p *page) {
			selectLang(p, "zh")
			p.waitFor(`document.querySelector("#nav-guardrails").textContent === "护栏"`, "the Chinese navigation")
			openPage(p, "guardrails")
			p.waitFor(contains("main h1, main h2", "护栏")+" && "+contains("#guardrails-list", "no-cards", "执行", "请求, 回答", "所有调用"), "the guardrail list in Chinese")
			p.screenshot("guardrails-zh")
			dryRunSample(p, "被 no-cards 拦截。", "card × 1")
			guardrailInLog(p, "护栏", "于 request")
			selectLang(p, "en")
			p.waitFor(`document.querySelector("#nav-dashboard").textContent === "Dashboard"`, "the English navigation")
		}},
	}
	for _, s := range steps {
		if !t.Run(s.name, func(t *testing.T) { p.t = t; s.run(p) }) {
			return
		}
	}
	if probs := b.Problems(); len(probs) > 0 {
		t.Errorf("the page reported script errors: %v", probs)
	}
}

func createGuardrail(p *page) {
	openPage(p, "guardrails")
	p.waitFor(contains("#guardrails-list", "No guardrails yet."), "the empty list")
	p.click("#guardrail-create")
	p.waitVisible("dialog[open] input[name=name]")
	p.fill("dialog[open] input[name=name]", "no-cards")
	submitDialog(p)
	p.waitFor(`!document.querySelector("dialog[open]")`, "the dialog to close")
	p.waitFor(contains("#guardrails-list", "no-cards", "pii", "Enforce", "Request, Answer", "Every call"), "the new guardrail in the list")
	p.screenshot("guardrails")
}

// dryRunSample checks a sample holding a card number and waits for the
// verdict and what was found.
func dryRunSample(p *page, verdict, found string) {
	p.t.Helper()
	p.fill("main form textarea[name=text]", "please charge 4111 1111 1111 1111 today")
	p.click("main form button[type=submit]")
	p.waitFor(contains("#guardrail-dry-result", verdict, "no-cards", found), "the dry run's verdict")
	if strings.Contains(p.text("#guardrail-dry-result"), "4111") {
		p.t.Fatalf("the dry run of a block echoes the card: %q", p.text("#guardrail-dry-result"))
	}
}

// blockedCall sends a chat request with a card number with a user's key
// until the guardrail (loaded within a moment of its creation) refuses it.
func blockedCall(p *page, base string) {
	p.t.Helper()
	body := fmt.Sprintf(`{"model":%q,"messages":[{"role":"user","content":"my card is 4111 1111 1111 1111"}]}`, chatModel)
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp := postJSON(p.t, base+"/v1/chat/completions", userKey, body)
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == 400 && strings.Contains(string(data), "guardrail_blocked") {
			return
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("the call was not blocked: %d %s", resp.StatusCode, data)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// guardrailInLog opens the newest error row's detail and finds the
// guardrail that fired in it.
func guardrailInLog(p *page, heading, stage string) {
	p.t.Helper()
	openPage(p, "logs")
	p.waitFor(`document.querySelector("#logs-list tbody tr button[aria-label]") !== null`, "the usage log")
	if err := p.eval(`(() => { const row = [...document.querySelectorAll("#logs-list tbody tr")].find((r) => r.querySelector("button[aria-label]"));
		row.querySelector("button[aria-label]").click(); })()`, nil); err != nil {
		p.t.Fatal(err)
	}
	p.waitFor(contains("dialog[open]", heading)+" && "+contains("dialog[open] ul.guardrail-hits", "no-cards", "block", stage, "card × 1"), "what fired in the log detail")
	if strings.Contains(p.text("dialog[open]"), "4111") {
		p.t.Fatal("the log detail shows the matched text")
	}
	p.screenshot("log-guardrails")
	p.click("dialog[open] .dialog-actions button")
	p.waitFor(`!document.querySelector("dialog[open]")`, "the detail to close")
}

func postJSON(t *testing.T, url, key, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}
