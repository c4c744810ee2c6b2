package relay

import (
	"io"
	"net/http"

	"github.com/turnpike-gw/turnpike/internal/protocol"
)

// relayStream pumps the upstream stream to the client event by event:
// untouched when the channel speaks the client's format, converted
// otherwise.
func (c *call) relayStream(up protocol.UpstreamCodec, events func(io.Reader) protocol.EventReader, resp *http.Response) error {
	s := newSink(c.w, c, c.sf.jsonArrayStream)
	tally := &streamTally{answer: keptAnswer{sp: c.sf.codec}}
	defer tally.answer.release()
	var step eventStep
	if up.Format() == c.sf.codec.Format() {
		step = &passStep{sp: c.sf.codec, sink: s, tally: tally, dropUsageOnly: !c.req.IncludeUsage}
	} else {
		enc := c.sf.codec.NewStreamEncoder(s, protocol.StreamOptions{IncludeUsage: c.req.IncludeUsage})
		step = newConvertStep(up.NewStreamDecoder(), enc, c.model, c.promptTokens(), tally)
	}
	err := pumpFrames(resp.Body, events, s, step)
	if err != nil && !c.wrote {
		// Nothing reached the client: the caller may try another channel.
		return err
	}
	s.close()
	if err != nil {
		c.rl.Logger.Warn("stream ended early", "channel_id", c.channel.ID, "err", err)
	}
	c.usage = tally.usage
	c.settleUsage(tally.outputText())
	return nil
}
