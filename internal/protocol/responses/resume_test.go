package responses

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/turnpike-gw/turnpike/internal/ir"
)

const (
	evCreated  = `{"type":"response.created","sequence_number":0,"response":{"id":"resp_up","created_at":7,"model":"m","output":[]}}`
	evRsAdded  = `{"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"id":"rs_up","type":"reasoning","summary":[]}}`
	evRsDone   = `{"type":"response.output_item.done","sequence_number":2,"output_index":0,"item":{"id":"rs_up","type":"reasoning","summary":[]}}`
	evMsgAdded = `{"type":"response.output_item.added","sequence_number":3,"output_index":1,"item":{"id":"msg_up","type":"message","role":"assistant","content":[]}}`
	evPart     = `{"type":"response.content_part.added","sequence_number":4,"item_id":"msg_up","output_index":1,"content_index":0,"part":{"type":"output_text","text":""}}`
	evDelta    = `{"type":"response.output_text.delta","sequence_number":5,"item_id":"msg_up","output_index":1,"content_index":0,"delta":"Once "}`
	evFnAdded  = `{"type":"response.output_item.added","sequence_number":6,"output_index":2,"item":{"id":"fc_up","type":"function_call","name":"f","arguments":""}}`
	evRefusal  = `{"type":"response.content_part.added","sequence_number":4,"item_id":"msg_up","output_index":1,"content_index":0,"part":{"type":"refusal","refusal":""}}`
	evComplete = `{"type":"response.completed","sequence_number":6,"response":{"id":"resp_up","status":"completed","output":[]}}`
)

// Only a stream cut inside the text of its one open message may be
// continued: not one with a tool call under way, a refusal, no text yet,
// or one that already ended.
func TestASentStreamIsResumableOnlyInsideTheTextOfItsOneOpenMessage(t *testing.T) {
	cases := []struct {
		name   string
		events []string
		want   bool
	}{
		{"text of the open message", []string{evCreated, evRsAdded, evRsDone, evMsgAdded, evPart, evDelta}, true},
		{"a delta of a message never announced", []string{evCreated, evDelta}, true},
		{"no text yet", []string{evCreated, evMsgAdded, evPart}, false},
		{"a function call under way", []string{evCreated, evMsgAdded, evPart, evDelta, evFnAdded}, false},
		{"a refusal", []string{evCreated, evMsgAdded, evRefusal}, false},
		{"already completed", []string{evCreated, evMsgAdded, evPart, evDelta, evComplete}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := (&Request{}).TrackStream()
			for _, ev := range c.events {
				s.Note("", []byte(ev))
			}
			if got := s.Resumable(); got != c.want {
				t.Fatalf("resumable %v, want %v", got, c.want)
			}
		})
	}
}

// The resumed encoder goes on with the same response: the open message's
// item, sequence numbers after the last sent, and a final response holding
// every item the client saw with the message's whole text.
func TestAResumedStreamGoesOnWithTheSameResponseAndItem(t *testing.T) {
	s := (&Request{}).TrackStream()
	for _, ev := range []string{evCreated, evRsAdded, evRsDone, evMsgAdded, evPart, evDelta} {
		s.Note("", []byte(ev))
	}
	var out []string
	enc := s.Resume(sinkFunc(func(_ string, data []byte) error { out = append(out, string(data)); return nil }))
	for _, ev := range []ir.Event{
		{Type: ir.EventDelta, Index: 0, Block: ir.BlockText, Text: "upon a time"},
		{Type: ir.EventBlockStop, Index: 0},
		{Type: ir.EventStop, StopReason: ir.StopEnd},
		{Type: ir.EventDone},
	} {
		if err := enc.Encode(ev); err != nil {
			t.Fatal(err)
		}
	}
	wantTypes := []string{"response.output_text.delta", "response.output_text.done", "response.content_part.done",
		"response.output_item.done", "response.completed"}
	if len(out) != len(wantTypes) {
		t.Fatalf("events:\n%s", strings.Join(out, "\n"))
	}
	for i, data := range out {
		ev := gjson.Parse(data)
		if ev.Get("type").String() != wantTypes[i] || ev.Get("sequence_number").Int() != int64(6+i) {
			t.Fatalf("event %d: %s, want %s with sequence_number %d", i, data, wantTypes[i], 6+i)
		}
		if id := ev.Get("item_id"); id.Exists() && (id.String() != "msg_up" || ev.Get("output_index").Int() != 1) {
			t.Fatalf("event %d continues item %s at %d, want msg_up at 1", i, id, ev.Get("output_index").Int())
		}
	}
	final := gjson.Parse(out[len(out)-1]).Get("response")
	if final.Get("id").String() != "resp_up" || final.Get("created_at").Int() != 7 || final.Get("output.#").Int() != 2 ||
		final.Get("output.0.id").String() != "rs_up" || final.Get("output.1.content.0.text").String() != "Once upon a time" {
		t.Fatalf("final response %s", final.Raw)
	}
}

type sinkFunc func(name string, data []byte) error

func (f sinkFunc) Event(name string, data []byte) error { return f(name, data) }
