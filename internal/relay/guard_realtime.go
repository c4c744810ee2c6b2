package relay

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/tidwall/gjson"

	"github.com/turnpike-gw/turnpike/internal/guardrail"
	"github.com/turnpike-gw/turnpike/internal/ir"
)

// rtGuarded are the client events of a realtime session that carry text
// the model reads, and the members that hold it.
var rtGuarded = map[string][]string{
	"conversation.item.create": {"item"},
	"session.update":           {"session.instructions"},
	"response.create":          {"response.instructions", "response.input"},
}

// rtGuards keeps what the guardrails did on a session's client frames
// until the next response's row takes it: the frames are read on one
// goroutine and the rows written on another.
type rtGuards struct {
	mu      sync.Mutex
	records []guardrail.Record
}

func (g *rtGuards) add(recs []guardrail.Record) {
	g.mu.Lock()
	g.records = append(g.records, recs...)
	g.mu.Unlock()
}

func (g *rtGuards) take() []guardrail.Record {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := g.records
	g.records = nil
	return out
}

// guardFrame is the request stage of one client frame of a realtime
// session, on the texts its event declares (rtGuarded): a redaction
// rewrites the frame; a block keeps it from the upstream (nothing is
// generated, so nothing is charged) and answers the client's error event.
func (s *rtSession) guardFrame(ctx context.Context, data []byte) ([]byte, []byte) {
	set := s.rl.guardSet()
	call := s.guardCall()
	if !set.Applies(call, guardrail.StageRequest) {
		return data, nil
	}
	members := rtGuarded[gjson.GetBytes(data, "type").Str]
	if members == nil {
		return data, nil
	}
	j := gatherJSON(&data, members...)
	gt := j.guardTexts(s.model)
	v := set.Check(ctx, guardrail.Input{Call: call, Stage: guardrail.StageRequest, Texts: gt.texts, Tokens: gt.tokens})
	s.rtg.add(v.Records)
	if v.Blocked != nil {
		return nil, rtErrorEvent(blockedError(v.Blocked), gjson.GetBytes(data, "event_id").Str)
	}
	if v.Redacted {
		_ = j.commit()
	}
	return data, nil
}

// rtErrorEvent is the realtime API's error event for a client event.
func rtErrorEvent(e *ir.Error, eventID string) []byte {
	b, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]any{
		"type": string(e.Kind), "code": e.Code, "message": e.Message, "param": nil, "event_id": eventID}})
	return b
}
