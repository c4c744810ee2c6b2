package compat

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// The coding-agent fakes play one scripted task per model: the agent is
// asked to read a note in its working directory; the fake answers the first
// turn with a call of the agent's own file or shell tool, and the turn that
// carries the tool's output with a sentence quoting the note's secret. A
// request without tools (a title or topic call some agents make on the side)
// gets a short text. Each fake refuses, as its provider would, what that API
// does not accept: roles, ids, tool schemas, results without their call, and
// thinking replayed without the signature it minted.

// agentScript is one agent on one channel.
type agentScript struct {
	model  string
	tool   string         // the agent's tool the fake calls
	param  string         // a property the tool's converted schema must declare
	args   map[string]any // the call's arguments
	secret string         // what the note says; the tool result must carry it
}

func (s agentScript) answer() string { return "The secret word is " + s.secret + "." }

// agentView is what a fake read from a request, whatever its wire.
type agentView struct {
	model     string
	tools     map[string]map[string]json.RawMessage // name → schema properties
	result    string                                // tool output in the last user turn
	thinking  bool                                  // the request asks for thinking
	replayed  string                                // signature sent back with the fake's call
	callNamed string                                // name of the call the result answers
	noUsage   bool                                  // a chat stream that did not ask for usage
}

// agentReply is the fake's decision.
type agentReply struct {
	text      string
	call      bool
	name      string
	args      string
	signature string // minted for thinking that comes with the call
}

// namePattern is what the providers accept as a tool name.
var namePattern = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// agentFake is one upstream of a wire with the scripts of its models.
type agentFake struct {
	*fake
	scripts map[string]agentScript
	mu      sync.Mutex
	minted  map[string]string // model → signature handed out with the call
	replays map[string]string // model → signature the next turn carried back
}

func (f *agentFake) script(model string) (agentScript, bool) {
	s, ok := f.scripts[model]
	return s, ok
}

// decide plays the script: the tool call first, the answer once the tool's
// output came back; a problem is what the real API or model would refuse.
func (f *agentFake) decide(v agentView) (agentReply, string) {
	s, ok := f.script(v.model)
	if !ok {
		return agentReply{}, fmt.Sprintf("model %q is not served here", v.model)
	}
	for name := range v.tools {
		if !namePattern.MatchString(name) {
			return agentReply{}, fmt.Sprintf("tool name %q does not match %s", name, namePattern)
		}
	}
	if v.result != "" {
		if v.callNamed != "" && v.callNamed != s.tool {
			return agentReply{}, fmt.Sprintf("the tool result answers a call of %q, the fake called %q", v.callNamed, s.tool)
		}
		if !strings.Contains(v.result, s.secret) {
			return agentReply{}, fmt.Sprintf("the tool result does not carry the note's text %q: %.300q", s.secret, v.result)
		}
		f.mu.Lock()
		minted := f.minted[v.model]
		f.replays[v.model] = v.replayed
		f.mu.Unlock()
		if minted != "" && v.thinking && v.replayed != minted {
			return agentReply{}, fmt.Sprintf("the call's thinking came back with signature %q, not the %q it was given", v.replayed, minted)
		}
		return agentReply{text: s.answer()}, ""
	}
	if len(v.tools) == 0 {
		return agentReply{text: "Reading a note"}, ""
	}
	props, ok := v.tools[s.tool]
	if !ok {
		return agentReply{}, fmt.Sprintf("the agent's %s tool is not declared (tools: %d)", s.tool, len(v.tools))
	}
	if _, ok := props[s.param]; !ok {
		return agentReply{}, fmt.Sprintf("the %s tool's schema lost its %q property", s.tool, s.param)
	}
	args, _ := json.Marshal(s.args)
	rep := agentReply{call: true, name: s.tool, args: string(args)}
	if v.thinking {
		rep.signature = "sig" + strings.NewReplacer("-", "", ".", "").Replace(v.model) + "Zm9v"
		f.mu.Lock()
		f.minted[v.model] = rep.signature
		f.mu.Unlock()
	}
	return rep, ""
}

// signatures reports what the fake minted and what came back, per model.
func (f *agentFake) signatures(model string) (minted, replayed string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.minted[model], f.replays[model]
}

// agentHandler is the part of each wire's fake that differs: reading the
// request and writing an answer (stream or not) in the wire's shapes.
type agentHandler interface {
	read(r *http.Request, body []byte) (agentView, bool, string) // view, stream, problem
	write(w http.ResponseWriter, v agentView, stream bool, rep agentReply)
	fail(w http.ResponseWriter, msg string)
}

func startAgentFake(t *testing.T, kind, key string, h agentHandler, scripts ...agentScript) *agentFake {
	af := &agentFake{scripts: map[string]agentScript{}, minted: map[string]string{}, replays: map[string]string{}}
	for _, s := range scripts {
		af.scripts[s.model] = s
	}
	af.fake = startFake(t, kind, key, func(rc *recorder, w http.ResponseWriter, r *http.Request) {
		body, err := readBody(r)
		if err != nil {
			h.fail(w, err.Error())
			return
		}
		v, stream, problem := h.read(r, body)
		var rep agentReply
		if problem == "" {
			rep, problem = af.decide(v)
		}
		if problem != "" {
			rc.problem(r, problem)
			h.fail(w, "fake "+kind+" upstream: "+problem)
			return
		}
		rc.ok(v.model)
		h.write(w, v, stream, rep)
	})
	return af
}

// schemaProps reads the properties of an object schema; ok is false for a
// schema that is not an object, which no provider takes as a tool's input.
func schemaProps(raw json.RawMessage) (map[string]json.RawMessage, bool) {
	var s struct {
		Type       any                        `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(raw, &s) != nil {
		return nil, false
	}
	typ, _ := s.Type.(string)
	if !strings.EqualFold(typ, "object") {
		return nil, false
	}
	if s.Properties == nil {
		s.Properties = map[string]json.RawMessage{}
	}
	return s.Properties, true
}

// isJSONObject reports whether raw is a JSON object, as the providers
// require of call arguments and (alternate-native) tool results.
func isJSONObject(raw json.RawMessage) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(raw, &m) == nil && m != nil
}
