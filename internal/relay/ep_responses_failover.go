package relay

import (
	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol"
)

// A native Responses stream (a channel speaking the Responses API) is
// relayed untouched, so it has no IR events to note for a failover while it
// flows. With stream_failover, its events are tracked instead
// (protocol.ResponsesStream); when it breaks inside the text of its one
// open message, the one failover mechanism (resumer) asks the next chat
// channel for the rest, and the tracker's encoder goes on with the same
// response, item and sequence numbers on the same client stream, ending
// with response.completed. Billing is the converted stream's: once, the
// prompt and the whole output at the first model's price.

// trackForFailover is the tracker of a native stream of a model with
// stream_failover, nil when there is nothing to continue with: the option
// is off, or the request has no IR form a chat channel could be asked with.
func (rc *respCall) trackForFailover() protocol.ResponsesStream {
	if rc.price == nil || !rc.price.Raw.StreamFailover || rc.dec == nil || rc.decErr != nil {
		return nil
	}
	return rc.dec.TrackStream()
}

// resumeNative is the stream tail's resume step of a native stream and the
// bill that puts a served failover on the row. A stream guardrail never
// gets here: its window holds only the native events, and a continuation
// would pass it unread.
func (rc *respCall) resumeNative(sent protocol.ResponsesStream, s *sink, tally *streamTally, bill func(ir.Usage) charge) (func() error, func(ir.Usage) charge) {
	rc.resume = rc.newResumer(rc.dec.Call(), rc.inputTokens, nil, s, tally)
	rc.resume.prime = func() *failoverEncoder {
		if !sent.Resumable() {
			return nil
		}
		fo := newFailoverEncoder(sent.Resume(s))
		fo.open[0], fo.next = ir.BlockText, 1
		fo.text.WriteString(sent.Text())
		return fo
	}
	return rc.resume.resume, rc.resume.bill(bill)
}
