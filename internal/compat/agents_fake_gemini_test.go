package compat

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// agentGemini is the alternate-native wire (a Gemini channel). Models whose
// name starts with gemini-3 sign every function call, as those models do,
// and refuse a replayed call without its signature (or the documented
// sentinel for history from elsewhere).
type agentGemini struct{ key string }

type agentGeminiPart struct {
	Text         *string `json:"text"`
	Thought      bool    `json:"thought"`
	Signature    string  `json:"thoughtSignature"`
	FunctionCall *struct {
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	} `json:"functionCall"`
	FunctionResponse *struct {
		Name     string          `json:"name"`
		Response json.RawMessage `json:"response"`
	} `json:"functionResponse"`
}

type agentGeminiRequest struct {
	Contents []struct {
		Role  string                       `json:"role"`
		Parts []map[string]json.RawMessage `json:"parts"`
	} `json:"contents"`
	Tools []struct {
		FunctionDeclarations []struct {
			Name                 string          `json:"name"`
			Parameters           json.RawMessage `json:"parameters"`
			ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
}

const geminiSkipSignature = "skip_thought_signature_validator"

func (a agentGemini) read(r *http.Request, body []byte) (agentView, bool, string) {
	rest, ok := strings.CutPrefix(r.URL.Path, "/v1beta/models/")
	model, action, _ := strings.Cut(rest, ":")
	stream := action == "streamGenerateContent" && r.URL.Query().Get("alt") == "sse"
	switch {
	case r.Method != http.MethodPost || !ok || (action != "generateContent" && !stream):
		return agentView{}, false, "expected POST /v1beta/models/{model}:generateContent or :streamGenerateContent?alt=sse"
	case r.Header.Get("x-goog-api-key") != a.key && r.URL.Query().Get("key") != a.key:
		return agentView{}, false, "expected the channel key in x-goog-api-key"
	}
	var raw map[string]json.RawMessage
	var req agentGeminiRequest
	if err := json.Unmarshal(body, &raw); err != nil {
		return agentView{}, false, err.Error()
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return agentView{}, false, err.Error()
	}
	if bad := unknownKeys(raw, geminiFields...); len(bad) > 0 {
		return agentView{}, false, "Invalid JSON payload received. Unknown name " + strings.Join(bad, ", ")
	}
	if p := geminiConfigProblem(raw); p != "" {
		return agentView{}, false, p
	}
	v := agentView{model: model, tools: map[string]map[string]json.RawMessage{}, thinking: strings.HasPrefix(model, "gemini-3")}
	for i, t := range req.Tools {
		for j, fd := range t.FunctionDeclarations {
			schema := fd.ParametersJSONSchema
			if len(schema) == 0 {
				schema = fd.Parameters
			}
			props, ok := schemaProps(schema)
			if !ok {
				return v, false, fmt.Sprintf("tools[%d].function_declarations[%d].parameters: type must be OBJECT", i, j)
			}
			v.tools[fd.Name] = props
		}
	}
	return v, stream, a.conversation(&req, &v)
}

// conversation checks roles and parts, that each functionResponse answers a
// call of the model turn before it, and reads the signature of that call.
func (agentGemini) conversation(req *agentGeminiRequest, v *agentView) string {
	if len(req.Contents) == 0 {
		return "contents is not specified"
	}
	var called map[string]bool
	signed := ""
	for i, c := range req.Contents {
		if c.Role != "user" && c.Role != "model" {
			return fmt.Sprintf("Please use a valid role: user, model (contents[%d].role %q)", i, c.Role)
		}
		if len(c.Parts) == 0 {
			return fmt.Sprintf("contents[%d].parts must not be empty", i)
		}
		if c.Role == "model" {
			called, signed, v.result = map[string]bool{}, "", ""
		} else {
			v.result = ""
		}
		for j, rawPart := range c.Parts {
			if p := geminiPartShape(rawPart); p != "" {
				return fmt.Sprintf("contents[%d].parts[%d]: %s", i, j, p)
			}
			b, _ := json.Marshal(rawPart)
			var part agentGeminiPart
			_ = json.Unmarshal(b, &part)
			switch {
			case part.FunctionCall != nil && !isJSONObject(part.FunctionCall.Args):
				return fmt.Sprintf("contents[%d].parts[%d].function_call.args: Proto field is not repeating, cannot start list (want an object)", i, j)
			case part.FunctionResponse != nil && !isJSONObject(part.FunctionResponse.Response):
				return fmt.Sprintf("contents[%d].parts[%d].function_response.response: want an object (google.protobuf.Struct)", i, j)
			case part.FunctionCall != nil && c.Role == "model":
				if len(called) == 0 {
					signed = part.Signature
				}
				called[part.FunctionCall.Name] = true
			case part.FunctionResponse != nil:
				if c.Role != "user" || !called[part.FunctionResponse.Name] {
					return fmt.Sprintf("contents[%d].parts[%d]: function response %q answers no function call of the turn before", i, j, part.FunctionResponse.Name)
				}
				v.result += string(part.FunctionResponse.Response)
				v.callNamed = part.FunctionResponse.Name
			}
		}
	}
	if v.result != "" && v.thinking {
		switch signed {
		case "":
			return "Function call is missing a thought_signature in functionCall parts."
		case geminiSkipSignature:
			v.thinking = false // accepted as the API does, recorded as the sentinel
		}
		v.replayed = signed
	}
	return ""
}

// geminiPartShape checks a part holds exactly one kind of data.
func geminiPartShape(part map[string]json.RawMessage) string {
	n := 0
	for _, k := range geminiDataFields {
		if _, ok := part[k]; ok {
			n++
		}
	}
	if n != 1 {
		return "oneof field 'data' must be set exactly once"
	}
	return ""
}

func (agentGemini) fail(w http.ResponseWriter, msg string) {
	writeJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{"code": 400, "message": msg, "status": "INVALID_ARGUMENT"}})
}

func (agentGemini) write(w http.ResponseWriter, v agentView, stream bool, rep agentReply) {
	var parts []any
	if rep.call {
		call := map[string]any{"functionCall": map[string]any{"name": rep.name, "args": json.RawMessage(rep.args)}}
		if rep.signature != "" {
			parts = append(parts, map[string]any{"text": "The note holds the answer.", "thought": true})
			call["thoughtSignature"] = rep.signature
		}
		parts = append(parts, call)
	} else {
		parts = []any{map[string]any{"text": rep.text}}
	}
	chunk := geminiChunk(v.model, parts, true, fakeOutputTokens)
	if !stream {
		writeJSON(w, http.StatusOK, chunk)
		return
	}
	newSSE(w).send("", chunk)
}
