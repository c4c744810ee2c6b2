package gemini

import (
	"encoding/json"

	"github.com/turnpike-gw/turnpike/internal/ir"
)

// DecodeResponse reads an upstream GenerateContentResponse. Only the first
// candidate is kept, as the IR holds one answer. A blocked prompt is an empty
// answer stopped by the content filter.
func (Codec) DecodeResponse(body []byte) (*ir.Response, error) {
	var w responseWire
	if err := json.Unmarshal(body, &w); err != nil {
		return nil, badUpstream(err)
	}
	if w.Error != nil {
		return nil, errorFromDetail(w.Error.Code, w.Error)
	}
	resp := &ir.Response{ID: w.ResponseID, Model: w.ModelVersion, Usage: usageFromWire(w.UsageMetadata)}
	if len(w.Candidates) == 0 {
		resp.StopReason = ir.StopEnd
		if w.PromptFeedback != nil && w.PromptFeedback.BlockReason != "" {
			resp.StopReason = ir.StopContentFilter
		}
		return resp, nil
	}
	c := w.Candidates[0]
	called := false
	if c.Content != nil {
		resp.Content, called = answerParts(c.Content.Parts, w.ResponseID)
	}
	resp.StopReason = stopReason(c.FinishReason, called)
	return resp, nil
}

func badUpstream(cause error) *ir.Error {
	return &ir.Error{Status: 502, Kind: ir.KindUpstream, Code: "bad_upstream_response",
		Message: "the upstream returned a malformed answer", Retry: ir.RetryNext, Cause: cause}
}

// answerParts maps the parts of an upstream answer; signatures are tagged as
// minted by this format's upstream.
func answerParts(parts []partWire, responseID string) ([]ir.Part, bool) {
	var out []ir.Part
	called := false
	for j, p := range parts {
		if p.Thought && p.Text != nil {
			out = appendThought(out, *p.Text, tagSignature(p.ThoughtSignature))
			continue
		}
		if keepSignature(p, lastIsThinking(out)) {
			out = attachSignature(out, tagSignature(p.ThoughtSignature))
		}
		switch {
		case p.FunctionCall != nil:
			called = true
			out = append(out, ir.Part{Kind: ir.PartToolCall, ToolCall: toolCallFromWire(p.FunctionCall, responseID, j)})
		case p.InlineData != nil:
			out = append(out, mediaPart(&ir.Media{MIMEType: p.InlineData.MIMEType, Data: p.InlineData.Data}))
		case p.FileData != nil:
			out = append(out, mediaPart(&ir.Media{MIMEType: p.FileData.MIMEType, URL: p.FileData.FileURI}))
		case p.Text != nil && *p.Text != "":
			out = append(out, ir.Part{Kind: ir.PartText, Text: *p.Text})
		}
	}
	return out, called
}

// keepSignature decides whether a signature on a non-thought part is kept.
// On a function call the provider needs it back; on text it is optional, and
// keeping it would only add an empty thinking block after the text unless a
// thinking block precedes it anyway.
func keepSignature(p partWire, afterThinking bool) bool {
	return p.ThoughtSignature != "" && (p.FunctionCall != nil || afterThinking)
}

func lastIsThinking(parts []ir.Part) bool {
	return len(parts) > 0 && parts[len(parts)-1].Kind == ir.PartThinking
}

func toolCallFromWire(fc *functionCallWire, responseID string, j int) *ir.ToolCall {
	id := fc.ID
	if id == "" {
		id = synthID(responseID, itoa(j), fc.Name)
	}
	args := string(fc.Args)
	if len(fc.Args) == 0 || args == "null" {
		args = "{}"
	}
	return &ir.ToolCall{ID: id, Name: fc.Name, Arguments: compactJSON(args)}
}

// EncodeResponse renders an IR answer as one GenerateContentResponse.
func (Codec) EncodeResponse(resp *ir.Response) ([]byte, error) {
	parts := clientParts(resp.Content)
	cand := candidateWire{FinishReason: finishReason(resp.StopReason)}
	if len(parts) > 0 {
		cand.Content = &contentWire{Role: "model", Parts: parts}
	}
	w := responseWire{
		Candidates:    []candidateWire{cand},
		UsageMetadata: usageToWire(resp.Usage),
		ModelVersion:  resp.Model,
		ResponseID:    resp.ID,
	}
	return json.Marshal(w)
}

// clientParts renders answer parts for a client of this format. Thinking
// becomes thought parts; a signature goes out untagged (so the client
// replays exactly what the provider produced) and where this provider puts
// it: on the first function call after the thinking, else on the last part.
// Clients of this format (Gemini CLI) look for it there, and add their own
// "skip" sentinel to a function call that has none.
func clientParts(parts []ir.Part) []partWire {
	out := make([]partWire, 0, len(parts))
	pending := ""
	for _, p := range parts {
		switch p.Kind {
		case ir.PartText:
			if p.Text != "" {
				out = append(out, textWire(p.Text))
			}
		case ir.PartThinking:
			if p.Thinking == nil || (p.Thinking.Text == "" && p.Thinking.Signature == "") {
				continue
			}
			if pending != "" {
				// A second signed thought before any call: the first keeps
				// its own signature.
				out = signLast(out, pending)
				pending = ""
			}
			if p.Thinking.Text != "" {
				pw := textWire(p.Thinking.Text)
				pw.Thought = true
				out = append(out, pw)
			}
			pending = clientSignature(p.Thinking.Signature)
		case ir.PartToolCall:
			if p.ToolCall != nil {
				out = append(out, partWire{ThoughtSignature: pending, FunctionCall: &functionCallWire{
					ID: p.ToolCall.ID, Name: p.ToolCall.Name, Args: argsObject(p.ToolCall.Arguments)}})
				pending = ""
			}
		case ir.PartImage, ir.PartFile:
			if p.Media != nil {
				out = append(out, mediaWire(p.Media))
			}
		}
	}
	if pending != "" {
		out = signLast(out, pending)
	}
	return out
}

// signLast puts sig on the last part, or on an empty text part when there
// is none or the last one is already signed.
func signLast(out []partWire, sig string) []partWire {
	if n := len(out); n == 0 || out[n-1].ThoughtSignature != "" {
		out = append(out, textWire(""))
	}
	out[len(out)-1].ThoughtSignature = sig
	return out
}

// argsObject returns the arguments as a JSON object; arguments that are not
// one (an upstream cut off mid-call) become an empty object, as clients of
// this format cannot parse anything else.
func argsObject(args string) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(args), &m) != nil || m == nil {
		return json.RawMessage("{}")
	}
	return json.RawMessage(compactJSON(args))
}
