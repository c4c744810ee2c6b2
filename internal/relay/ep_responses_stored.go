package relay

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"

	"github.com/tidwall/gjson"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol"
	"github.com/turnpike-gw/turnpike/internal/routing"
	"github.com/turnpike-gw/turnpike/internal/upstream"
)

// storedCallAnyKey sends a call on a stored response to its channel. The
// response index keeps the channel, not which of its keys made the
// response: each key is asked in turn until one knows it (keys of one
// channel may be different accounts).
func (rl *Relay) storedCallAnyKey(ctx context.Context, ch *routing.Channel, method, path string, body []byte, contentType string) (*http.Response, error) {
	var resp *http.Response
	for i := range ch.KeyCount() {
		var err error
		resp, err = rl.storedCall(ctx, ch.WithKey(i), method, path, body, contentType)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusNotFound || i == ch.KeyCount()-1 {
			break
		}
		resp.Body.Close()
	}
	return resp, nil
}

// storedCall is one call on a stored response with one key of its channel,
// through exchange (first-byte deadline, metrics, tracing) and channel
// health, like every attempt of a model call.
func (rl *Relay) storedCall(ctx context.Context, ch *routing.Channel, method, path string, body []byte, contentType string) (*http.Response, error) {
	a, t, err := rl.target(ch, "")
	if err != nil {
		return nil, err
	}
	var rd io.Reader = http.NoBody
	if body != nil {
		rd = bytes.NewReader(body)
	}
	ctx, cancel := context.WithCancel(ctx)
	req, err := rl.endpoint(ctx, t, method, path, rd, contentType)
	if err != nil {
		cancel()
		return nil, err
	}
	resp, err := rl.exchange(ctx, req, ch, cancel)
	if err != nil {
		cancel()
		rl.Router.Health.Report(ch, ch.KeyIndex, ir.As(err))
		return nil, err
	}
	if resp.StatusCode < 300 {
		resp.Body = cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
		rl.Router.Health.SucceededKey(ch, ch.KeyIndex)
		return resp, nil
	}
	// The failure is judged by the channel's policy, as an attempt's is; a
	// 404 (this key does not know the response) harms nothing by default.
	// The caller still reads the answer, so its bytes are kept.
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	resp.Body = cancelOnClose{ReadCloser: io.NopCloser(bytes.NewReader(answer)), cancel: cancel}
	e := upstream.DecodeAnswer(a, t, resp.StatusCode, resp.Header, answer)
	e.Message = ch.Redact(e.Message)
	rl.Router.Health.Report(ch, ch.KeyIndex, e)
	return resp, nil
}

// cancelOnClose ends a call's context when its answer is closed.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}

// relayStoredStream relays a retrieval with stream=true through the one
// stream tail. The retrieval has no charge of its own; its terminal event
// settles a background response still being followed, exactly as a JSON
// retrieval does.
func (rl *Relay) relayStoredStream(w http.ResponseWriter, r *http.Request, ch *routing.Channel, id string, resp *http.Response) {
	c := newCore(rl, w, r, "responses_retrieve", protocol.OpenAI)
	c.channel = ch
	api := rl.ResponsesAPI
	s := newSink(w, c, false)
	step := &passStep{sp: api, sink: s, tally: &streamTally{}, noText: true, ends: responseEnds, note: func(_ string, data []byte) {
		if final := terminalResponse(data); final != nil {
			rl.observeResponse(id, final)
		}
	}}
	// The core holds nothing and has no price: its settle is a no-op, and
	// the bill only carries the usage (the follower's charge is priced).
	_ = c.relayEvents(streamTail{body: resp.Body, sink: s, step: step, tally: step.tally, broken: eventStreamBroken(s)}, nil,
		func(u ir.Usage) charge { return charge{usage: u} })
}

// terminalResponse is the response object of a Responses stream's terminal
// event (completed, incomplete, failed), nil for any other event.
func terminalResponse(data []byte) []byte {
	if !bytes.Contains(data, []byte(`"response.`)) {
		return nil
	}
	switch gjson.GetBytes(data, "type").String() {
	case "response.completed", "response.incomplete", "response.failed", "response.cancelled":
		if v := gjson.GetBytes(data, "response"); v.IsObject() {
			return []byte(v.Raw)
		}
	}
	return nil
}

// settleBeforeDelete settles a followed background response before the
// client deletes it: on its final usage when the channel shows it
// finished, else on its whole reservation, since it ran. A deleted
// response is never refunded.
func (rl *Relay) settleBeforeDelete(ctx context.Context, id string) {
	g := &rl.background
	g.mu.Lock()
	f := g.pending[id]
	g.mu.Unlock()
	if f == nil {
		return
	}
	body, status := f.fetchFrom(ctx)
	if status == http.StatusOK && !isPending(body) {
		f.end(g, body)
		return
	}
	f.chargeReservation(g, "deleted")
}

// fetchFrom retrieves the followed response; status is 0 when the channel
// could not be reached.
func (f *bgFollow) fetchFrom(ctx context.Context) ([]byte, int) {
	resp, err := f.rc.rl.storedCall(ctx, f.channel, http.MethodGet, "/v1/responses/"+url.PathEscape(f.id), nil, "")
	if err != nil {
		return nil, 0
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, resp.StatusCode
	}
	body, err := readAnswer(resp)
	if err != nil {
		return nil, 0
	}
	return body, http.StatusOK
}

// errBackgroundUnfinished ends a background response that never finished
// within the limit.
var errBackgroundUnfinished = &ir.Error{Status: http.StatusGatewayTimeout, Kind: ir.KindTimeout, Code: "background_timeout",
	Message: "the background response did not finish in time"}
