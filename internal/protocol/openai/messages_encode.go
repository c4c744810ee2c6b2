package openai

import (
	"strings"

	"github.com/turnpike-gw/turnpike/internal/ir"
)

func encodeMessages(req *ir.Request) ([]wireMessage, error) {
	out := make([]wireMessage, 0, len(req.Messages)+1)
	if len(req.System) > 0 {
		text, err := joinText(req.System, "system")
		if err != nil {
			return nil, err
		}
		out = append(out, wireMessage{Role: "system", Content: text})
	}
	for i, m := range req.Messages {
		param := item("messages", i)
		var err error
		switch m.Role {
		case ir.RoleSystem:
			var text string
			text, err = joinText(m.Parts, field(param, "content"))
			out = append(out, wireMessage{Role: "system", Content: text})
		case ir.RoleUser, ir.RoleTool:
			out, err = appendUserTurn(out, m, param)
		case ir.RoleAssistant:
			var msg wireMessage
			msg, err = encodeAssistant(m, param)
			out = append(out, msg)
		default:
			err = invalid(field(param, "role"), "role '%s' cannot be sent upstream", m.Role)
		}
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// joinText concatenates text parts for content that may only be text.
func joinText(parts []ir.Part, param string) (string, error) {
	var b strings.Builder
	for _, p := range parts {
		switch p.Kind {
		case ir.PartText:
			if b.Len() > 0 {
				b.WriteString("\n\n")
			}
			b.WriteString(p.Text)
		case ir.PartThinking, ir.PartRedactedThinking:
		default:
			return "", invalid(param, "'%s' may only hold text, not %s", param, p.Kind)
		}
	}
	return b.String(), nil
}

// appendUserTurn writes a user or tool turn. Tool results become tool
// messages; images inside results cannot ride in a tool message, so they
// follow in a user message right after, which keeps them visible to the
// model and keeps the tool messages adjacent to their assistant turn.
func appendUserTurn(out []wireMessage, m ir.Message, param string) ([]wireMessage, error) {
	var rest []wirePart
	for j, p := range m.Parts {
		pparam := item(field(param, "content"), j)
		if p.Kind == ir.PartToolResult && p.ToolResult != nil {
			msg, media, err := encodeToolResult(p.ToolResult, pparam)
			if err != nil {
				return nil, err
			}
			out = append(out, msg)
			rest = append(rest, media...)
			continue
		}
		wp, keep, err := encodeUserPart(p, pparam)
		if err != nil {
			return nil, err
		}
		if keep {
			rest = append(rest, wp)
		}
	}
	if len(rest) > 0 {
		out = append(out, wireMessage{Role: "user", Name: m.Name, Content: userContent(rest)})
	}
	return out, nil
}

// userContent uses the plain string form for a lone text part, the form
// every compatible server understands.
func userContent(parts []wirePart) any {
	if len(parts) == 1 && parts[0].Type == "text" {
		return parts[0].Text
	}
	return parts
}

func encodeToolResult(r *ir.ToolResult, param string) (wireMessage, []wirePart, error) {
	var text strings.Builder
	var media []wirePart
	for k, p := range r.Content {
		switch p.Kind {
		case ir.PartText:
			if text.Len() > 0 {
				text.WriteString("\n")
			}
			text.WriteString(p.Text)
		case ir.PartImage, ir.PartFile:
			wp, _, err := encodeUserPart(p, item(field(param, "content"), k))
			if err != nil {
				return wireMessage{}, nil, err
			}
			media = append(media, wp)
		}
	}
	return wireMessage{Role: "tool", ToolCallID: r.CallID, Content: text.String()}, media, nil
}

// encodeUserPart converts one user content part; keep is false for parts
// that carry nothing for a user turn (reasoning).
func encodeUserPart(p ir.Part, param string) (wirePart, bool, error) {
	switch p.Kind {
	case ir.PartText:
		return wirePart{Type: "text", Text: p.Text}, p.Text != "", nil
	case ir.PartImage:
		if p.Media == nil {
			return wirePart{}, false, invalid(param, "'%s' has no image", param)
		}
		return imagePart(p.Media), true, nil
	case ir.PartFile:
		if p.Media == nil {
			return wirePart{}, false, invalid(param, "'%s' has no file", param)
		}
		wp, err := filePart(p.Media, param)
		return wp, err == nil, err
	case ir.PartThinking, ir.PartRedactedThinking:
		return wirePart{}, false, nil
	}
	return wirePart{}, false, invalid(param, "'%s' of kind %s cannot be sent in a user message", param, p.Kind)
}

func imagePart(m *ir.Media) wirePart {
	u := m.URL
	if u == "" {
		u = dataURL(m.MIMEType, m.Data)
	}
	return wirePart{Type: "image_url", ImageURL: &wireImageURL{URL: u, Detail: m.Detail}}
}

func filePart(m *ir.Media, param string) (wirePart, error) {
	switch {
	case strings.HasPrefix(m.MIMEType, "image/"):
		return imagePart(m), nil
	case strings.HasPrefix(m.MIMEType, "audio/") && m.Data != "":
		return wirePart{Type: "input_audio", InputAudio: &wireInputAudio{Data: m.Data, Format: audioFormat(m.MIMEType)}}, nil
	case strings.HasPrefix(m.URL, fileIDScheme):
		return wirePart{Type: "file", File: &wireFile{FileID: strings.TrimPrefix(m.URL, fileIDScheme), Filename: m.Name}}, nil
	case m.Data != "":
		return wirePart{Type: "file", File: &wireFile{FileData: dataURL(m.MIMEType, m.Data), Filename: m.Name}}, nil
	}
	return wirePart{}, invalid(param, "'%s': files given by URL cannot be sent to an OpenAI-style upstream; send the data inline", param)
}

func dataURL(mime, data string) string {
	if mime == "" {
		mime = "application/octet-stream"
	}
	return "data:" + mime + ";base64," + data
}

// audioFormat maps an audio media type to input_audio's format names.
func audioFormat(mime string) string {
	sub := strings.TrimPrefix(mime, "audio/")
	switch sub {
	case "mpeg", "mp3":
		return "mp3"
	case "x-wav", "wave", "vnd.wave":
		return "wav"
	}
	return sub
}

// encodeAssistant writes an assistant turn. Reasoning is not sent back:
// Chat Completions has no request field for it and some compatible servers
// reject reasoning_content in input, while dropping it only costs context.
func encodeAssistant(m ir.Message, param string) (wireMessage, error) {
	msg := wireMessage{Role: "assistant", Name: m.Name}
	var text strings.Builder
	for j, p := range m.Parts {
		switch p.Kind {
		case ir.PartText:
			text.WriteString(p.Text)
		case ir.PartToolCall:
			if p.ToolCall == nil {
				continue
			}
			msg.ToolCalls = append(msg.ToolCalls, wireToolCall{ID: p.ToolCall.ID, Type: "function",
				Function: wireCallFunction{Name: p.ToolCall.Name, Arguments: argumentsOrEmpty(p.ToolCall.Arguments)}})
		case ir.PartThinking, ir.PartRedactedThinking:
		default:
			pparam := item(field(param, "content"), j)
			return msg, invalid(pparam, "'%s' of kind %s cannot be sent in an assistant message", pparam, p.Kind)
		}
	}
	// content may be null only beside tool calls; an empty turn needs "".
	if text.Len() > 0 || len(msg.ToolCalls) == 0 {
		msg.Content = text.String()
	}
	return msg, nil
}

func argumentsOrEmpty(args string) string {
	if args == "" {
		return "{}"
	}
	return args
}
