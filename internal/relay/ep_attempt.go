package relay

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/routing"
	"github.com/turnpike-gw/turnpike/internal/upstream"
)

// sendOpenAI sends the client's body to the endpoint's path on an
// OpenAI-compatible channel, with only the model rewritten.
func sendOpenAI(c *epCall, ctx context.Context, _ *routing.Channel, t upstream.Target) (*http.Request, func(), error) {
	return c.sendTo(ctx, t, c.ep.path, nil)
}

// sendTo sends the body (JSON or form) to path with the model set to the
// channel's mapped model and the JSON fields in set applied.
func (c *epCall) sendTo(ctx context.Context, t upstream.Target, path string, set map[string]any) (*http.Request, func(), error) {
	if c.in.form != nil {
		set := map[string]string{"model": t.Model}
		for k, v := range c.in.overrides {
			set[k] = v
		}
		fb, err := c.in.form.body(set)
		if err != nil {
			return nil, nil, err
		}
		req, err := c.rl.endpoint(ctx, t, http.MethodPost, path, fb, fb.contentType)
		if err != nil {
			_ = fb.Close()
			return nil, nil, err
		}
		req.ContentLength = fb.length
		return req, func() { _ = fb.Close() }, nil
	}
	body, err := jsonWith(c.in.raw, "model", t.Model)
	for k, v := range set {
		if err == nil {
			body, err = sjson.SetBytes(body, k, v)
		}
	}
	if err != nil {
		return nil, nil, ir.BadRequest("invalid_body", "the request body must be a JSON object")
	}
	req, err := c.rl.endpoint(ctx, t, http.MethodPost, path, bytes.NewReader(body), "application/json")
	if err != nil {
		return nil, nil, err
	}
	return req, func() {}, nil
}

// jsonWith sets one field only when it differs, so an untouched body keeps
// its bytes.
func jsonWith(raw []byte, field, value string) ([]byte, error) {
	if gjson.GetBytes(raw, field).String() == value {
		return raw, nil
	}
	return sjson.SetBytes(raw, field, value)
}

// readAnswer reads a whole 2xx answer; a cut-off answer lets the next channel
// try, as nothing reached the client yet.
func readAnswer(resp *http.Response) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBody))
	if err != nil {
		return nil, &ir.Error{Status: 502, Kind: ir.KindUpstream, Code: "upstream_read_failed", Message: "the upstream answer was cut off", Retry: ir.RetryNext, Cause: err}
	}
	return body, nil
}

// relayPassthrough answers with the upstream body as it is, under the
// upstream's content type (text, srt and vtt transcripts are not JSON).
func relayPassthrough(c *epCall, ch *routing.Channel, resp *http.Response) error {
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		// A streamed answer (partial images, transcript deltas) is relayed
		// as it arrives, not held until the end, and billed on the usage
		// its terminal event reports.
		return c.relayEventAnswer(resp)
	}
	body, err := readAnswer(resp)
	if err != nil {
		return err
	}
	if blocked := c.guardAnswerBody(&body); blocked != nil {
		c.answerRefused(blocked, c.ep.bill(c, body))
		return nil
	}
	ct := resp.Header.Get("Content-Type")
	if ct == "" {
		ct = "application/json"
	}
	c.answer(ct, body, c.ep.bill(c, body))
	return nil
}

// answer writes a complete answer and settles it.
func (c *epCall) answer(contentType string, body []byte, ch charge) {
	c.wrote = true
	c.w.Header().Set("Content-Type", contentType)
	c.w.WriteHeader(http.StatusOK)
	_, _ = c.w.Write(body)
	c.settle(ch)
}
