package relay

import (
	"io"
	"net/http"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol"
	"github.com/turnpike-gw/turnpike/internal/routing"
)

func isEventStream(resp *http.Response) bool {
	return strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream")
}

// relayNativeStream passes the channel's events through as they arrive,
// reading usage from the terminal event and the id from response.created.
// A stream that breaks before its first event may still go to the next
// channel.
func (rc *respCall) relayNativeStream(ch *routing.Channel, resp *http.Response) error {
	s := newSink(rc.w, rc.epCall, false)
	api := rc.rl.ResponsesAPI
	tally := &streamTally{answer: keptAnswer{sp: api}}
	sent := rc.trackForFailover()
	step, bill := rc.windowed(&passStep{sp: api, sink: s, tally: tally, ends: responseEnds, note: func(name string, data []byte) {
		if api.CreatedEvent(name, data) {
			rc.remember(ch, api.ResponseID(data))
		}
		rc.noteNativeEvent(name, data)
		if sent != nil {
			sent.Note(name, data)
		}
	}}, responsesDelta, responsesWhole, responsesFail(s), rc.billed)
	t := streamTail{body: resp.Body, sink: s, step: step, tally: tally, broken: eventStreamBroken(s)}
	if _, guarded := step.(*guardPass); sent != nil && !guarded {
		t.resume, bill = rc.resumeNative(sent, s, tally, bill)
	}
	return rc.relayEvents(t, rc.inputTokens, bill)
}

// relayConverted answers a Responses call from a chat channel's complete
// answer.
func (rc *respCall) relayConverted(codec protocol.UpstreamCodec, resp *http.Response) error {
	body, err := readAnswer(resp)
	if err != nil {
		return err
	}
	res, err := codec.DecodeResponse(body)
	if err != nil {
		return &ir.Error{Status: 502, Kind: ir.KindUpstream, Code: "bad_upstream_response", Message: "the upstream answer could not be understood", Retry: ir.RetryNext, Cause: err}
	}
	u := res.Usage
	if u.InputTokens == 0 {
		u.InputTokens = rc.inputTokens()
	}
	if u.OutputTokens == 0 {
		u.OutputTokens = countTexts(rc.model, gjson.Result{Type: gjson.String, Str: contentText(res.Content)})
	}
	res.Usage = u
	if blocked, _ := rc.guardAnswer(res); blocked != nil {
		rc.answerRefused(blocked, tokensPlusCall(rc.price, u))
		return nil
	}
	out, err := rc.dec.EncodeResponse(res, rc.model)
	if err != nil {
		return err
	}
	rc.cache.note(res)
	rc.answer("application/json", out, rc.billed(u))
	return nil
}

// relayConvertedStream turns a chat channel's stream into the Responses
// event stream, event by event. With stream_failover a break after text was
// sent is continued on the next chat channel, as for a chat call.
func (rc *respCall) relayConvertedStream(codec protocol.UpstreamCodec, events func(io.Reader) protocol.EventReader, resp *http.Response) error {
	s := newSink(rc.w, rc.epCall, false)
	enc := rc.dec.NewStreamEncoder(s, rc.model)
	// A converted stream keeps text, never raw events: no passthrough reader.
	tally := &streamTally{}
	out, bill := rc.guardEncoding(enc, responsesFail(s), rc.billed)
	var fo *failoverEncoder
	if rc.price.Raw.StreamFailover {
		fo = newFailoverEncoder(out)
		out = fo
	}
	var step eventStep = newConvertStep(codec.NewStreamDecoder(), out, rc.model, rc.inputTokens(), tally)
	if rec := rc.cache.recorder(); rec != nil {
		step = &recordStep{eventStep: step, dec: codec.NewStreamDecoder(), rec: rec}
	}
	broken := func() { _ = enc.Fail("the upstream stream broke off before the answer was complete") }
	t := streamTail{body: resp.Body, frames: events, sink: s, step: step, tally: tally, broken: broken}
	if fo != nil {
		rc.resume = rc.newResumer(rc.dec.Call(), rc.inputTokens, fo, s, tally)
		t.resume, bill = rc.resume.resume, rc.resume.bill(bill)
	}
	return rc.relayEvents(t, rc.inputTokens, bill)
}
