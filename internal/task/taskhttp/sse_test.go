package taskhttp

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/task"
)

// sseEnv is a plugin with two channels: the primary (tried first) answers
// with script, the backup would accept anything.
func sseEnv(t *testing.T, pluginFile, key, model string, script func(w http.ResponseWriter)) (*env, *filerVendor, *filerVendor) {
	t.Helper()
	e := newEnv(t, pluginFile)
	e.price(store.ModelPrice{Name: model, PerCall: 0.001})
	primary, backup := newFilerVendor(t), newFilerVendor(t)
	primary.sse = script
	backup.sse = func(w http.ResponseWriter) { _, _ = io.WriteString(w, "data: {\"done\":true}\n\n") }
	e.channel(key+"-primary", key, primary.srv.URL, []string{model}, func(c *store.Channel) { c.Priority = 10 })
	e.channel(key+"-backup", key, backup.srv.URL, []string{model}, nil)
	return e, primary, backup
}

func writeEvents(events ...string) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		for _, ev := range events {
			_, _ = io.WriteString(w, ev)
			w.(http.Flusher).Flush()
		}
	}
}

func TestSSESubmitSnapshotsBuildTheBodyFromFramedEvents(t *testing.T) {
	script := writeEvents(
		": a comment the reader skips\r\n\r\n",
		"id: 1\r\ndata: {\"part\":\"hel\",\r\ndata: \"n\":1}\r\n\r\n",
		"event: chunk\nid: 2\ndata: {\"part\":\"lo\"}\n\n",
		"event: end\rdata: {\"done\":true}\r\r",
		"data: {\"part\":\"never read\"}\n\n",
	)
	e, primary, backup := sseEnv(t, "files/filer.js", "filer", "filer-v1", script)
	code, out := e.postJSON("/filer/v1/jobs", userKey, `{"model":"filer-v1","mode":"sse"}`)
	if code != 200 {
		t.Fatalf("submit: %d %v", code, out)
	}
	data, _ := json.Marshal(out["data"])
	if want := `{"doc":"hello","events":["message/1","chunk/2","end/2"]}`; string(data) != want {
		t.Errorf("task data = %s, want %s", data, want)
	}
	if primary.last().header.Get("Accept") != "text/event-stream" || backup.count() != 0 {
		t.Errorf("accept header %q, backup submits %d", primary.last().header.Get("Accept"), backup.count())
	}
	tk := e.task(out["id"].(string))
	if tk.UpstreamID != "sse-job" || tk.Status != task.StatusSubmitted {
		t.Errorf("stored task = %s %s", tk.UpstreamID, tk.Status)
	}
}

// sseFailure is one stream that must fail the submit after acceptance.
type sseFailure struct {
	name     string
	script   func(w http.ResponseWriter)
	wantText string
}

// checkSSEFailures runs each failing stream on a fresh gateway; idle, when
// not zero, is the streams' idle limit instead of the default.
func checkSSEFailures(t *testing.T, pluginFile, key, model, request string, idle time.Duration, tests []sseFailure) {
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, primary, backup := sseEnv(t, pluginFile, key, model, tt.script)
			if idle > 0 {
				e.opts.SubmitStreamIdle = idle
				e.restart()
			}
			code, out := e.postJSON("/"+key+"/v1/jobs", userKey, request)
			msg, _ := json.Marshal(out)
			if code != 502 || !strings.Contains(string(msg), tt.wantText) {
				t.Errorf("got %d %s, want 502 mentioning %q", code, msg, tt.wantText)
			}
			if primary.count() != 1 || backup.count() != 0 {
				t.Errorf("submits: primary %d, backup %d; a stream accepted upstream must not be retried", primary.count(), backup.count())
			}
			if got := e.quota(e.alice); got != 1_000_000 {
				t.Errorf("quota = %d, want the reservation refunded", got)
			}
		})
	}
}

func TestSSESubmitSnapshotFailuresAfterAcceptanceAreNotRetried(t *testing.T) {
	checkSSEFailures(t, "files/filer.js", "filer", "filer-v1", `{"model":"filer-v1","mode":"sse"}`, 0, []sseFailure{
		{"EOF without done", writeEvents("data: {\"part\":\"a\"}\n\n"), "ended before the plugin reported done"},
		{"an unterminated last event", writeEvents("data: {\"done\":true}"), "ended before the plugin reported done"},
		{"a hook error", writeEvents("data: {\"fail\":true}\n\n"), "provider stream failure"},
		{"an oversized state", writeEvents("data: {\"large\":true}\n\n"), "state larger than 1048576 bytes"},
		{"an oversized event", writeEvents("data: \"" + strings.Repeat("x", 1<<20) + "\"\n\n"), "larger than 1048576 bytes"},
	})
}

// An idle stream gets its own short idle timeout: shared with the cases
// above, it would cut a hook that is merely slow on a loaded machine.
func TestSSESubmitIdleStreamAfterAcceptanceIsNotRetried(t *testing.T) {
	checkSSEFailures(t, "files/filer.js", "filer", "filer-v1", `{"model":"filer-v1","mode":"sse"}`, 150*time.Millisecond, []sseFailure{
		{"an idle stream", func(w http.ResponseWriter) {
			writeEvents("data: {\"part\":\"a\"}\n\n")(w)
			time.Sleep(600 * time.Millisecond)
		}, "no event for"},
	})
}

func TestSSESubmitFailureBeforeAcceptanceTriesTheNextChannel(t *testing.T) {
	e, primary, backup := sseEnv(t, "files/filer.js", "filer", "filer-v1", nil)
	primary.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		primary.mu.Lock()
		primary.submits = append(primary.submits, recorded{})
		primary.mu.Unlock()
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	code, out := e.postJSON("/filer/v1/jobs", userKey, `{"model":"filer-v1","mode":"sse"}`)
	if code != 200 || primary.count() != 1 || backup.count() != 1 {
		t.Errorf("got %d %v with submits primary %d backup %d, want the backup to take it", code, out, primary.count(), backup.count())
	}
}

func deltaEvents(chunks ...string) func(w http.ResponseWriter) {
	var evs []string
	for i, c := range chunks {
		evs = append(evs, fmt.Sprintf("id: %d\ndata: %s\n\n", i, c))
	}
	return writeEvents(evs...)
}

func TestSSESubmitDeltasBuildAHostHeldResult(t *testing.T) {
	script := deltaEvents(
		`{"changes":[{"op":"set","path":[],"value":{"output":{"choices":[]},"usage":null}}]}`,
		`{"changes":[{"op":"append","path":["output","choices"],"value":{"text":"Hel"}},{"op":"set","path":["request_id"],"value":"r-1"}]}`,
		`{"changes":[{"op":"appendText","path":["output","choices",0,"text"],"value":"lo"},{"op":"appendText","path":["log"],"value":"a"}]}`,
		`{"changes":[{"op":"set","path":["usage"],"value":{"tokens":3}},{"op":"set","path":["output","choices",0,"done"],"value":true}],"done":true}`,
	)
	e, _, backup := sseEnv(t, "files/delta.js", "delta", "delta-v1", script)
	code, out := e.postJSON("/delta/v1/jobs", userKey, `{"model":"delta-v1"}`)
	if code != 200 {
		t.Fatalf("submit: %d %v", code, out)
	}
	data, _ := json.Marshal(out["data"])
	if want := `{"log":"a","output":{"choices":[{"done":true,"text":"Hello"}]},"request_id":"r-1","usage":{"tokens":3}}`; string(data) != want {
		t.Errorf("task data = %s, want %s", data, want)
	}
	if backup.count() != 0 {
		t.Errorf("the backup got a submit")
	}
}

func TestSSESubmitDeltaLimitsFailTheSubmit(t *testing.T) {
	deep := func(n int) string {
		p := make([]string, n)
		for i := range p {
			p[i] = `"k"`
		}
		return "[" + strings.Join(p, ",") + "]"
	}
	nested := strings.Repeat("[", 33) + strings.Repeat("]", 33)
	many := "[" + strings.TrimSuffix(strings.Repeat("0,", 32769), ",") + "]"
	checkSSEFailures(t, "files/delta.js", "delta", "delta-v1", `{"model":"delta-v1"}`, 0, []sseFailure{
		{"257 changes in one event", deltaEvents(`{"repeat":257}`), "257 changes in one event"},
		{"a path of 33 segments", deltaEvents(`{"changes":[{"op":"set","path":` + deep(33) + `,"value":1}]}`), "more than 32"},
		{"nesting of 33 levels", deltaEvents(`{"changes":[{"op":"set","path":[],"value":` + nested + `}]}`), "nest more than 32 levels"},
		{"32,769 nodes", deltaEvents(`{"changes":[{"op":"set","path":["a"],"value":` + many + `}]}`), "nodes, more than 32768"},
		{"a result over 1 MiB", deltaEvents(`{"bigText":600000}`, `{"bigText":600000}`), "more than 1048576"},
		{"a control state over 64 KiB", deltaEvents(`{"bigControl":65537}`), "control state larger than 65536 bytes"},
		{"appendText on a number", deltaEvents(`{"changes":[{"op":"set","path":["n"],"value":1},{"op":"appendText","path":["n"],"value":"x"}]}`), "not a string"},
		{"EOF without done", deltaEvents(`{"changes":[]}`), "ended before the plugin reported done"},
	})
}
