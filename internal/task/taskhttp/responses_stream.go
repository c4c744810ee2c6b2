package taskhttp

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/task"
)

// keepAliveAfter is how long a response stream may stay silent before the
// host writes an SSE comment, so idle proxies do not cut a long wait.
const keepAliveAfter = 15 * time.Second

// streamResponse serves stream mode: renderEvents after the submit and
// after each poll, each event framed as one SSE event, until the plugin
// says done. Upstream events never reach the client; only rendered ones.
func (pc *protoCall) streamResponse(out *task.Submitted, c *candidate, rb any) error {
	ctx := pc.r.Context()
	sw := &respStream{w: pc.w}
	var state any
	render := func(t *task.Task, data any) (bool, error) {
		rctx := pc.renderContext(rb)
		pc.h.withArtifacts(ctx, rctx, t)
		res, err := pc.renderEvents(ctx, c.l, c.claim, rctx, renderView(t, data), state)
		if err != nil {
			return false, err
		}
		state = res.state
		for _, ev := range res.events {
			if err := sw.event(ev); err != nil {
				return false, err
			}
		}
		return res.done, nil
	}
	done, err := render(out.Task, out.Data)
	if err != nil || done || out.Task.Ended() {
		return sw.end(err)
	}
	var rerr error
	t, werr := pc.h.core.Await(ctx, out.Task, time.Now().Add(pc.h.opts.ProtocolTimeout), func(t *task.Task) bool {
		d, err := render(t, nil)
		if err != nil {
			rerr = err
			return true
		}
		sw.keepAlive()
		return d
	})
	switch {
	case rerr != nil:
		return sw.end(rerr)
	case errors.Is(werr, task.ErrWaitTimeout):
		return sw.end(responseTimeout(t))
	}
	return nil
}

// respStream frames rendered events as SSE. Headers go out with the first
// event, so a failure before any event is still an ordinary JSON error.
type respStream struct {
	w       http.ResponseWriter
	started bool
	last    time.Time
}

func (sw *respStream) start() {
	if sw.started {
		return
	}
	h := sw.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	sw.w.WriteHeader(http.StatusOK)
	sw.started = true
}

// event writes one event: its `type` names the SSE event, its JSON is the
// data.
func (sw *respStream) event(ev map[string]any) error {
	b, err := json.Marshal(ev)
	if err != nil {
		return &ir.Error{Status: 502, Kind: ir.KindUpstream, Code: "render_failed", Message: "renderEvents returned an event that is not JSON"}
	}
	return sw.write(respFrame(respEventName(ev), b))
}

// respEventName is an event's type when it is a usable SSE event name.
func respEventName(ev map[string]any) string {
	name, _ := ev["type"].(string)
	if strings.ContainsAny(name, "\r\n") {
		return ""
	}
	return name
}

// respFrame is one SSE event; JSON never holds a raw newline, so the data
// is one line.
func respFrame(name string, data []byte) []byte {
	var b []byte
	if name != "" {
		b = append(append(append(b, "event: "...), name...), '\n')
	}
	b = append(append(append(b, "data: "...), data...), "\n\n"...)
	return b
}

func (sw *respStream) write(b []byte) error {
	sw.start()
	if _, err := sw.w.Write(b); err != nil {
		return err
	}
	_ = http.NewResponseController(sw.w).Flush()
	sw.last = time.Now()
	return nil
}

func (sw *respStream) keepAlive() {
	if sw.started && time.Since(sw.last) >= keepAliveAfter {
		_ = sw.write([]byte(": keep-alive\n\n"))
	}
}

// end finishes the stream. An error before the first event is returned for
// the ordinary error answer; after it, it becomes an `error` event.
func (sw *respStream) end(err error) error {
	if err == nil || !sw.started {
		if !sw.started && err == nil {
			sw.start()
		}
		return err
	}
	e := ir.As(err)
	b, _ := json.Marshal(map[string]any{"type": "error", "code": e.Code, "message": e.Message})
	_ = sw.write(respFrame("error", b))
	return nil
}
