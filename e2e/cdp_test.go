package e2e

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/turnpike-gw/turnpike/internal/testkit"
)

// findChromium locates a Chromium binary: TURNPIKE_CHROMIUM, then the
// names Debian and others install it under.
func findChromium() string {
	if p := os.Getenv("TURNPIKE_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless_shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// requireChromium skips the test when no browser is installed, unless
// TURNPIKE_E2E=1 says the browser tests must run (CI), where it fails.
func requireChromium(t *testing.T) string {
	t.Helper()
	p := findChromium()
	if p == "" {
		if os.Getenv("TURNPIKE_E2E") == "1" {
			t.Fatal("TURNPIKE_E2E=1 but no Chromium was found; install it with `apt-get install -y chromium` or set TURNPIKE_CHROMIUM")
		}
		t.Skip("browser tests skipped: Chromium is not installed (apt-get install -y chromium); set TURNPIKE_E2E=1 to make this a failure")
	}
	return p
}

// cdpMessage is any frame of the DevTools protocol: a reply (ID set) or an
// event (Method set).
type cdpMessage struct {
	ID        int64           `json:"id,omitempty"`
	Method    string          `json:"method,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

// browser is a headless Chromium driven over one DevTools WebSocket.
type browser struct {
	cmd     *exec.Cmd
	conn    *websocket.Conn
	ctx     context.Context
	cancel  context.CancelFunc
	profile string
	nextID  atomic.Int64
	mu      sync.Mutex
	pending map[int64]chan cdpMessage
	// problems collects uncaught page exceptions and console errors, which
	// the test reports so a broken script is visible, not just a timeout.
	problems []string
}

var devtoolsURL = regexp.MustCompile(`DevTools listening on (ws://\S+)`)

func launchBrowser(t *testing.T, bin string) *browser {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	// Not t.TempDir: Chromium's helper processes may still be writing the
	// profile for a moment after the browser exits, and TempDir's cleanup
	// fails the test when the directory is not empty.
	profile, err := os.MkdirTemp("", "turnpike-e2e-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"--headless=new", "--remote-debugging-port=0", "--user-data-dir=" + profile,
		"--disable-gpu", "--no-first-run", "--no-default-browser-check", "--disable-dev-shm-usage",
		"--disable-extensions", "--disable-background-networking", "--disable-component-update",
		"--hide-scrollbars", "--mute-audio", "--window-size=1280,860", "about:blank"}
	if os.Geteuid() == 0 {
		// Chromium refuses to start its sandbox as root (CI containers).
		args = append(args, "--no-sandbox")
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start chromium: %v", err)
	}
	wsURL := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := devtoolsURL.FindStringSubmatch(sc.Text()); m != nil {
				wsURL <- m[1]
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
	}()
	b := &browser{cmd: cmd, ctx: ctx, cancel: cancel, profile: profile, pending: map[int64]chan cdpMessage{}}
	t.Cleanup(b.close)
	select {
	case u := <-wsURL:
		b.conn, _, err = websocket.Dial(ctx, u, nil)
		if err != nil {
			t.Fatalf("connect to chromium: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("chromium did not print its DevTools address within 20s")
	}
	b.conn.SetReadLimit(64 << 20) // screenshots arrive as one large frame
	go b.readLoop()
	return b
}

// close asks Chromium to quit so it stops its helper processes itself,
// kills it if it does not within a few seconds, and removes the profile.
func (b *browser) close() {
	exited := make(chan struct{})
	go func() { _ = b.cmd.Wait(); close(exited) }()
	if b.conn != nil {
		_ = b.call("", "Browser.close", nil, nil)
	}
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
	}
	if b.conn != nil {
		_ = b.conn.Close(websocket.StatusNormalClosure, "")
	}
	b.cancel()
	<-exited
	for i := 0; i < 20; i++ {
		if os.RemoveAll(b.profile) == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (b *browser) readLoop() {
	for {
		_, data, err := b.conn.Read(b.ctx)
		if err != nil {
			b.mu.Lock()
			for id, ch := range b.pending {
				close(ch)
				delete(b.pending, id)
			}
			b.mu.Unlock()
			return
		}
		var m cdpMessage
		if json.Unmarshal(data, &m) != nil {
			continue
		}
		if m.ID != 0 {
			b.mu.Lock()
			ch := b.pending[m.ID]
			delete(b.pending, m.ID)
			b.mu.Unlock()
			if ch != nil {
				ch <- m
			}
			continue
		}
		b.event(m)
	}
}

func (b *browser) event(m cdpMessage) {
	switch m.Method {
	case "Runtime.exceptionThrown":
		var p struct {
			ExceptionDetails struct {
				Text      string `json:"text"`
				Exception struct {
					Description string `json:"description"`
				} `json:"exception"`
			} `json:"exceptionDetails"`
		}
		_ = json.Unmarshal(m.Params, &p)
		b.addProblem("exception: " + p.ExceptionDetails.Text + " " + p.ExceptionDetails.Exception.Description)
	case "Runtime.consoleAPICalled":
		var p struct {
			Type string `json:"type"`
			Args []struct {
				Value       any    `json:"value"`
				Description string `json:"description"`
			} `json:"args"`
		}
		_ = json.Unmarshal(m.Params, &p)
		if p.Type == "error" {
			var parts []string
			for _, a := range p.Args {
				parts = append(parts, fmt.Sprint(a.Value, a.Description))
			}
			b.addProblem("console.error: " + strings.Join(parts, " "))
		}
	}
}

func (b *browser) addProblem(s string) {
	b.mu.Lock()
	b.problems = append(b.problems, s)
	b.mu.Unlock()
}

func (b *browser) Problems() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.problems...)
}

// call sends one command and waits for its reply.
func (b *browser) call(session, method string, params any, out any) error {
	id := b.nextID.Add(1)
	ch := make(chan cdpMessage, 1)
	b.mu.Lock()
	b.pending[id] = ch
	b.mu.Unlock()
	msg := map[string]any{"id": id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	if session != "" {
		msg["sessionId"] = session
	}
	data, _ := json.Marshal(msg)
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	if err := b.conn.Write(ctx, websocket.MessageText, data); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	select {
	case m, ok := <-ch:
		if !ok {
			return fmt.Errorf("%s: the browser connection closed", method)
		}
		if m.Error != nil {
			return fmt.Errorf("%s: %s", method, m.Error.Message)
		}
		if out != nil {
			return json.Unmarshal(m.Result, out)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%s: no reply: %w", method, ctx.Err())
	}
}

// page is one browser tab.
type page struct {
	t       *testing.T
	b       *browser
	session string
}

func (b *browser) newPage(t *testing.T) *page {
	t.Helper()
	var target struct {
		TargetID string `json:"targetId"`
	}
	if err := b.call("", "Target.createTarget", map[string]any{"url": "about:blank"}, &target); err != nil {
		t.Fatal(err)
	}
	var att struct {
		SessionID string `json:"sessionId"`
	}
	if err := b.call("", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &att); err != nil {
		t.Fatal(err)
	}
	p := &page{t: t, b: b, session: att.SessionID}
	p.must("Page.enable", nil)
	p.must("Runtime.enable", nil)
	p.must("Emulation.setDeviceMetricsOverride", map[string]any{"width": 1280, "height": 860, "deviceScaleFactor": 1, "mobile": false})
	return p
}

func (p *page) must(method string, params any) {
	p.t.Helper()
	if err := p.b.call(p.session, method, params, nil); err != nil {
		p.t.Fatal(err)
	}
}

// navigate loads url and waits for the document to finish loading.
func (p *page) navigate(url string) {
	p.t.Helper()
	p.must("Page.navigate", map[string]any{"url": url})
	p.waitFor(`document.readyState === "complete" && location.href !== "about:blank"`, "the page to load")
}

// eval runs a JavaScript expression (awaiting a promise) and decodes its
// JSON-able value into out when out is not nil.
func (p *page) eval(expr string, out any) error {
	var r struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text      string `json:"text"`
			Exception struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	err := p.b.call(p.session, "Runtime.evaluate", map[string]any{"expression": expr, "awaitPromise": true, "returnByValue": true}, &r)
	if err != nil {
		return err
	}
	if r.ExceptionDetails != nil {
		return fmt.Errorf("script failed: %s %s", r.ExceptionDetails.Text, r.ExceptionDetails.Exception.Description)
	}
	if out != nil && len(r.Result.Value) > 0 {
		return json.Unmarshal(r.Result.Value, out)
	}
	return nil
}

func (p *page) text(selector string) string {
	p.t.Helper()
	var s string
	if err := p.eval(fmt.Sprintf(`(document.querySelector(%q) || {}).textContent || ""`, selector), &s); err != nil {
		p.t.Fatal(err)
	}
	return s
}

var errWaitTimeout = errors.New("timed out")

// navigatedAway reports an evaluation that ended because its page's
// document went away under it (Chrome DevTools Protocol's wording).
func navigatedAway(err error) bool {
	if err == nil {
		return false
	}
	msg := err.Error()
	return strings.Contains(msg, "Inspected target navigated or closed") ||
		strings.Contains(msg, "Execution context was destroyed") ||
		strings.Contains(msg, "Cannot find context with specified id")
}

// poll evaluates cond until it is true or timeout passes. An evaluation
// that a navigation cut short (the page was leaving, as after a sign-out)
// is asked again on the next page: it says nothing about cond.
func (p *page) poll(cond string, timeout time.Duration) error {
	var err error
	ok := testkit.WaitFor(timeout, 25*time.Millisecond, func() bool {
		var ok bool
		err = p.eval("!!("+cond+")", &ok)
		if navigatedAway(err) {
			return false
		}
		return err != nil || ok
	})
	switch {
	case err != nil:
		return err
	case !ok:
		return errWaitTimeout
	}
	return nil
}

// uiWait bounds every wait for the page. It is generous because CI runs
// this suite under the race detector on two busy cores, where a page that
// makes several API calls can take many seconds to settle.
const uiWait = 30 * time.Second

func (p *page) waitFor(cond, what string) {
	p.t.Helper()
	if err := p.poll(cond, uiWait); err != nil {
		p.t.Fatalf("waiting for %s: %v; page problems: %v; main text: %.600s", what, err, p.b.Problems(), p.bodyText())
	}
}

// waitText polls a string expression until it is non-empty and returns
// that value, read in the same evaluation that found it.
func (p *page) waitText(expr, what string) string {
	p.t.Helper()
	var s string
	if !testkit.WaitFor(uiWait, 15*time.Millisecond, func() bool {
		if err := p.eval(expr, &s); err != nil {
			p.t.Fatal(err)
		}
		return s != ""
	}) {
		p.t.Fatalf("waiting for %s: timed out; page problems: %v; page text: %.600s", what, p.b.Problems(), p.bodyText())
	}
	return s
}

func (p *page) bodyText() string {
	var s string
	_ = p.eval(`document.body ? document.body.innerText : ""`, &s)
	return s
}

func (p *page) waitVisible(selector string) {
	p.t.Helper()
	p.waitFor(fmt.Sprintf(`(() => { const e = document.querySelector(%q); return e && e.getClientRects().length > 0; })()`, selector), selector)
}

// click presses the mouse in the middle of the element, like a person,
// so focus and event order are the browser's own.
func (p *page) click(selector string) {
	p.t.Helper()
	p.waitVisible(selector)
	var pt struct{ X, Y float64 }
	js := fmt.Sprintf(`(() => { const e = document.querySelector(%q); e.scrollIntoView({block: "center"});
		const r = e.getBoundingClientRect(); return {X: r.x + r.width / 2, Y: r.y + r.height / 2}; })()`, selector)
	if err := p.eval(js, &pt); err != nil {
		p.t.Fatal(err)
	}
	for _, typ := range []string{"mousePressed", "mouseReleased"} {
		p.must("Input.dispatchMouseEvent", map[string]any{"type": typ, "x": pt.X, "y": pt.Y, "button": "left", "clickCount": 1})
	}
}

// fill focuses a field, clears it and types text as keyboard input.
func (p *page) fill(selector, text string) {
	p.t.Helper()
	p.waitVisible(selector)
	if err := p.eval(fmt.Sprintf(`(() => { const e = document.querySelector(%q); e.focus(); if ("value" in e) e.value = ""; })()`, selector), nil); err != nil {
		p.t.Fatal(err)
	}
	p.must("Input.insertText", map[string]any{"text": text})
}

// key presses one named key (Enter, ArrowLeft…) on the focused element.
func (p *page) key(name string) {
	p.t.Helper()
	codes := map[string]int{"Enter": 13, "ArrowLeft": 37, "ArrowRight": 39, "Tab": 9, "Escape": 27}
	down := map[string]any{"type": "keyDown", "key": name, "code": name, "windowsVirtualKeyCode": codes[name]}
	if name == "Enter" {
		down["text"] = "\r"
	}
	p.must("Input.dispatchKeyEvent", down)
	p.must("Input.dispatchKeyEvent", map[string]any{"type": "keyUp", "key": name, "code": name, "windowsVirtualKeyCode": codes[name]})
}

// screenshot writes docs/screenshots/name.png when TURNPIKE_SCREENSHOTS=1,
// so ordinary test runs leave the committed images alone.
func (p *page) screenshot(name string) {
	p.t.Helper()
	if os.Getenv("TURNPIKE_SCREENSHOTS") != "1" {
		return
	}
	// Toasts from earlier steps would cover the page; let fonts and
	// transitions settle so the picture is what a person sees.
	_ = p.eval(`document.querySelectorAll(".toast").forEach(t => t.remove())`, nil)
	// The pointer stays where the last click left it; move it off the page
	// content so no button is pictured in its hover state.
	_ = p.b.call(p.session, "Input.dispatchMouseEvent", map[string]any{"type": "mouseMoved", "x": 1, "y": 855}, nil)
	time.Sleep(150 * time.Millisecond)
	var r struct {
		Data string `json:"data"`
	}
	if err := p.b.call(p.session, "Page.captureScreenshot", map[string]any{"format": "png"}, &r); err != nil {
		p.t.Fatal(err)
	}
	png, err := base64.StdEncoding.DecodeString(r.Data)
	if err != nil {
		p.t.Fatal(err)
	}
	if err := os.MkdirAll("../docs/screenshots", 0o755); err != nil {
		p.t.Fatal(err)
	}
	if err := os.WriteFile("../docs/screenshots/"+name+".png", png, 0o644); err != nil {
		p.t.Fatal(err)
	}
}
