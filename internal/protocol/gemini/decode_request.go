package gemini

import (
	"github.com/tidwall/gjson"
	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol"
)

// DecodeRequest reads a generateContent body. The model is not in the body
// (it is in the URL), so Model is left empty for the relay to fill.
func (Codec) DecodeRequest(body []byte) (*ir.Request, error) {
	root, err := parseObject(body)
	if err != nil {
		return nil, err
	}
	return decodeGenerate(root, "")
}

func parseObject(body []byte) (gjson.Result, error) {
	if valid, dup := protocol.CheckMembers(body); !valid {
		return gjson.Result{}, ir.BadRequest("invalid_json", "Invalid JSON payload received.")
	} else if dup != nil {
		return gjson.Result{}, dup
	}
	root := gjson.ParseBytes(body)
	if !root.IsObject() {
		return gjson.Result{}, ir.BadRequest("invalid_json", "Invalid JSON payload received: expected an object.")
	}
	return root, nil
}

// reqDecoder carries what decoding one request needs across turns: the ids
// of the last model turn's calls, so results without ids can be matched.
type reqDecoder struct {
	req     *ir.Request
	pending map[string][]string
}

// decodeGenerate reads a GenerateContentRequest object; prefix is its path
// inside an enclosing body ("" at top level).
func decodeGenerate(root gjson.Result, prefix string) (*ir.Request, error) {
	// This format always reports usage, streamed or not.
	d := &reqDecoder{req: &ir.Request{IncludeUsage: true}}
	var contents, toolConfig gjson.Result
	var contentsPath, toolConfigPath string
	err := eachField(root, func(key string, v gjson.Result) error {
		if !present(v) {
			return nil
		}
		p := join(prefix, key)
		switch key {
		case "contents":
			contents, contentsPath = v, p
		case "systemInstruction", "system_instruction":
			return d.system(v, p)
		case "generationConfig", "generation_config":
			return d.generationConfig(v, p)
		case "tools":
			return d.tools(v, p)
		case "toolConfig", "tool_config":
			toolConfig, toolConfigPath = v, p
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := d.contents(contents, contentsPath, prefix); err != nil {
		return nil, err
	}
	if present(toolConfig) {
		if err := d.toolConfig(toolConfig, toolConfigPath); err != nil {
			return nil, err
		}
	}
	return d.req, nil
}

func (d *reqDecoder) contents(v gjson.Result, p, prefix string) error {
	if !present(v) {
		return badField(join(prefix, "contents"), "is required")
	}
	if err := wantArray(v, p); err != nil {
		return err
	}
	n := 0
	err := eachElem(v, func(i int, c gjson.Result) error {
		n++
		return d.content(i, c, index(p, i))
	})
	if err == nil && n == 0 {
		return badField(p, "must not be empty")
	}
	return err
}

func (d *reqDecoder) content(i int, v gjson.Result, p string) error {
	if err := wantObject(v, p); err != nil {
		return err
	}
	role, parts, err := contentFields(v, p)
	if err != nil {
		return err
	}
	switch role {
	case "", "user", "function":
		return d.userTurn(i, parts, join(p, "parts"))
	case "model":
		return d.modelTurn(i, parts, join(p, "parts"))
	}
	return badField(join(p, "role"), "must be user or model")
}

// contentFields reads a Content's role and decodes its non-empty parts.
func contentFields(v gjson.Result, p string) (string, []inPart, error) {
	var role string
	var parts []inPart
	seen := false
	err := eachField(v, func(key string, f gjson.Result) error {
		switch key {
		case "role":
			if present(f) {
				var err error
				role, err = getString(f, join(p, key))
				return err
			}
		case "parts":
			if !present(f) {
				return nil
			}
			pp := join(p, key)
			if err := wantArray(f, pp); err != nil {
				return err
			}
			seen = true
			return eachElem(f, func(j int, e gjson.Result) error {
				ip, err := decodePart(e, index(pp, j))
				parts = append(parts, ip)
				return err
			})
		}
		return nil
	})
	if err != nil {
		return "", nil, err
	}
	if !seen {
		return "", nil, badField(join(p, "parts"), "is required")
	}
	if len(parts) == 0 {
		return "", nil, badField(join(p, "parts"), "must not be empty")
	}
	return role, parts, nil
}

// userTurn splits a user content into user messages and one tool message per
// functionResponse, keeping their order.
func (d *reqDecoder) userTurn(i int, parts []inPart, p string) error {
	cur := -1
	for j, ip := range parts {
		if ip.call != nil {
			return badField(index(p, j)+".functionCall", "only model turns may call functions")
		}
		if ip.resp != nil {
			d.req.Messages = append(d.req.Messages, ir.Message{Role: ir.RoleTool,
				Parts: []ir.Part{d.toolResult(i, j, ip.resp)}})
			cur = -1
			continue
		}
		part, ok := plainPart(ip)
		if !ok {
			continue
		}
		if cur < 0 {
			d.req.Messages = append(d.req.Messages, ir.Message{Role: ir.RoleUser})
			cur = len(d.req.Messages) - 1
		}
		d.req.Messages[cur].Parts = append(d.req.Messages[cur].Parts, part)
	}
	return nil
}

func (d *reqDecoder) modelTurn(i int, parts []inPart, p string) error {
	d.pending = map[string][]string{}
	msg := ir.Message{Role: ir.RoleAssistant}
	for j, ip := range parts {
		if ip.resp != nil {
			return badField(index(p, j)+".functionResponse", "only user turns may carry function responses")
		}
		switch {
		case ip.thought && ip.hasText:
			msg.Parts = appendThought(msg.Parts, ip.text, ip.sig)
			continue
		case ip.sig != "":
			msg.Parts = signReplayed(msg.Parts, ip.sig)
		}
		if ip.call != nil {
			call := *ip.call
			if call.ID == "" {
				call.ID = synthID(itoa(i), itoa(j), call.Name)
			}
			d.pending[call.Name] = append(d.pending[call.Name], call.ID)
			msg.Parts = append(msg.Parts, ir.Part{Kind: ir.PartToolCall, ToolCall: &call})
			continue
		}
		if part, ok := plainPart(ip); ok {
			msg.Parts = append(msg.Parts, part)
		}
	}
	if len(msg.Parts) > 0 {
		d.req.Messages = append(d.req.Messages, msg)
	}
	return nil
}

// toolResult matches a response without an id to the oldest unanswered call
// of the same name in the preceding model turn, so ids stay consistent.
func (d *reqDecoder) toolResult(i, j int, r *inResponse) ir.Part {
	id := r.id
	q := d.pending[r.name]
	switch {
	case id == "" && len(q) > 0:
		id, d.pending[r.name] = q[0], q[1:]
	case id == "":
		id = synthID(itoa(i), itoa(j), r.name)
	default:
		for k, pid := range q {
			if pid == id {
				d.pending[r.name] = append(q[:k:k], q[k+1:]...)
				break
			}
		}
	}
	content, isErr := resultContent(r.response)
	return ir.Part{Kind: ir.PartToolResult, ToolResult: &ir.ToolResult{
		CallID: id, Name: r.name, Content: content, IsError: isErr}}
}

// plainPart maps text and media parts; empty text carries nothing.
func plainPart(ip inPart) (ir.Part, bool) {
	switch {
	case ip.media != nil:
		return mediaPart(ip.media), true
	case ip.hasText && ip.text != "":
		return ir.Part{Kind: ir.PartText, Text: ip.text}, true
	}
	return ir.Part{}, false
}

func thinkingPart(text, sig string) ir.Part {
	return ir.Part{Kind: ir.PartThinking, Thinking: &ir.Thinking{Text: text, Signature: sig}}
}

// appendThought adds thought text, continuing the previous thinking part
// while that one is still unsigned: clients that stored a streamed answer
// hold one reasoning block as several thought parts with the signature last,
// and formats that verify signatures need the whole text next to it.
func appendThought(parts []ir.Part, text, sig string) []ir.Part {
	if sig == skipSignature {
		sig = ""
	}
	if n := len(parts); n > 0 && parts[n-1].Kind == ir.PartThinking && parts[n-1].Thinking.Signature == "" {
		parts[n-1].Thinking.Text += text
		parts[n-1].Thinking.Signature = sig
		return parts
	}
	return append(parts, thinkingPart(text, sig))
}

// attachSignature puts a signature that came on a non-thought part of an
// upstream answer onto the thinking just before it, or into a thinking part
// of its own, so the IR keeps it just before the part it belonged to and a
// replay puts it back there.
func attachSignature(parts []ir.Part, sig string) []ir.Part {
	if n := len(parts); n > 0 && parts[n-1].Kind == ir.PartThinking && parts[n-1].Thinking.Signature == "" {
		parts[n-1].Thinking.Signature = sig
		return parts
	}
	return append(parts, thinkingPart("", sig))
}

// signReplayed places a signature a client sent back on a non-thought part
// of its history: onto the nearest unsigned thinking before it in the turn
// (text may sit between, since the provider signs the first function call
// after any text), so a format that keeps signature and reasoning together
// gets them together. The "skip" sentinel is no signature at all: it only
// tells this provider not to check, and another format would take it for a
// real one.
func signReplayed(parts []ir.Part, sig string) []ir.Part {
	if sig == skipSignature {
		return parts
	}
	for k := len(parts) - 1; k >= 0; k-- {
		if parts[k].Kind != ir.PartThinking {
			continue
		}
		if parts[k].Thinking.Signature == "" {
			parts[k].Thinking.Signature = sig
			return parts
		}
		break
	}
	return append(parts, thinkingPart("", sig))
}

func (d *reqDecoder) system(v gjson.Result, p string) error {
	if v.Type == gjson.String {
		d.req.System = append(d.req.System, ir.Part{Kind: ir.PartText, Text: v.Str})
		return nil
	}
	if err := wantObject(v, p); err != nil {
		return err
	}
	_, parts, err := contentFields(v, p)
	if err != nil {
		return err
	}
	for j, ip := range parts {
		if !ip.hasText {
			return badField(index(join(p, "parts"), j), "system instructions take only text parts")
		}
		if ip.text != "" {
			d.req.System = append(d.req.System, ir.Part{Kind: ir.PartText, Text: ip.text})
		}
	}
	return nil
}
