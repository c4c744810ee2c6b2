package responses

import (
	"encoding/json"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol"
)

// Sent tracks a Responses event stream relayed untouched to a client:
// the response's id and creation time, the next sequence number, the
// items finished and the ones still open. It reads only what a stream cut
// in the middle needs to be continued by another upstream (Resume).
type Sent struct {
	meta Meta
	seq  int
	// done are the items finished, by output index; open the items added
	// and not done yet.
	done    map[int]json.RawMessage
	open    map[int]*sentItem
	stopped bool
}

// sentItem is an output item the client saw added and not done.
type sentItem struct {
	id, typ string
	// part is the kind of its open content part ("output_text",
	// "refusal", …; empty when none is open) and index its index.
	part  string
	index int64
	text  strings.Builder
}

var _ protocol.ResponsesStream = (*Sent)(nil)

// TrackStream returns a tracker of this request's stream relayed
// untouched; the answer it resumes echoes the request like a converted one.
func (r *Request) TrackStream() protocol.ResponsesStream {
	return &Sent{meta: Meta{Echo: r.Echo, Tools: r.Tools}, done: map[int]json.RawMessage{}, open: map[int]*sentItem{}}
}

// Note reads one event the client was sent.
func (s *Sent) Note(name string, data []byte) {
	typ := EventType(name, data)
	if n := gjson.GetBytes(data, "sequence_number"); n.Exists() {
		s.seq = int(n.Int()) + 1
	}
	idx := int(gjson.GetBytes(data, "output_index").Int())
	switch typ {
	case "response.created":
		r := gjson.GetManyBytes(data, "response.id", "response.created_at", "response.model")
		s.meta.responseID, s.meta.CreatedAt, s.meta.Model = r[0].String(), r[1].Int(), r[2].String()
		s.meta.ID = strings.TrimPrefix(r[0].String(), "resp_")
	case "response.output_item.added":
		r := gjson.GetManyBytes(data, "item.id", "item.type")
		s.open[idx] = &sentItem{id: r[0].String(), typ: r[1].String()}
	case "response.content_part.added":
		if it := s.open[idx]; it != nil {
			r := gjson.GetManyBytes(data, "part.type", "content_index")
			it.part, it.index = r[0].String(), r[1].Int()
		}
	case "response.output_text.delta":
		it := s.open[idx]
		if it == nil {
			// A stream that never announced its message: the delta names it.
			it = &sentItem{id: gjson.GetBytes(data, "item_id").String(), typ: "message", part: "output_text"}
			s.open[idx] = it
		}
		it.text.WriteString(gjson.GetBytes(data, "delta").String())
	case "response.content_part.done":
		if it := s.open[idx]; it != nil {
			it.part = ""
		}
	case "response.output_item.done":
		delete(s.open, idx)
		s.done[idx] = json.RawMessage(gjson.GetBytes(data, "item").Raw)
	case "response.completed", "response.incomplete", "response.failed", "error":
		s.stopped = true
	}
}

// message is the one open item when it is a message whose first content
// part, output text, is open.
func (s *Sent) message() (int, *sentItem) {
	if s.stopped || len(s.open) != 1 {
		return -1, nil
	}
	for idx, it := range s.open {
		if it.typ == "message" && it.part == "output_text" && it.index == 0 {
			return idx, it
		}
	}
	return -1, nil
}

// Resumable reports a stream cut inside the text of its one open message.
func (s *Sent) Resumable() bool {
	_, it := s.message()
	return it != nil && it.text.Len() > 0
}

// Text is the open message's text so far.
func (s *Sent) Text() string {
	if _, it := s.message(); it != nil {
		return it.text.String()
	}
	return ""
}

// Resume returns an encoder going on with the stream: IR block 0 is the
// open message, later blocks become items after every one the client
// saw, and the final response holds them all.
func (s *Sent) Resume(sink protocol.EventSink) protocol.FailingStreamEncoder {
	e := NewStreamEncoder(sink, s.meta)
	e.seq, e.started = s.seq, true
	idx, msg := s.message()
	n := idx + 1
	for i := range s.done {
		n = max(n, i+1)
	}
	e.output = make([]any, n)
	for i, raw := range s.done {
		e.output[i] = raw
	}
	if msg != nil {
		it := &streamItem{index: idx, id: msg.id, kind: ir.BlockText}
		it.text.WriteString(msg.text.String())
		e.blocks[0] = it
	}
	return e
}
