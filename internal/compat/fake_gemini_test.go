package compat

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// The Gemini API parses requests as protobuf JSON, which accepts both the
// lowerCamel and the original snake_case field names and refuses unknown
// ones ("Invalid JSON payload received. Unknown name").
var (
	geminiFields = []string{
		"model", "contents", "tools", "toolConfig", "tool_config", "safetySettings", "safety_settings",
		"systemInstruction", "system_instruction", "generationConfig", "generation_config",
		"cachedContent", "cached_content",
	}
	geminiConfigFields = []string{
		"stopSequences", "stop_sequences", "responseMimeType", "response_mime_type", "responseSchema",
		"response_schema", "responseJsonSchema", "response_json_schema", "candidateCount", "candidate_count",
		"maxOutputTokens", "max_output_tokens", "temperature", "topP", "top_p", "topK", "top_k", "seed",
		"presencePenalty", "presence_penalty", "frequencyPenalty", "frequency_penalty", "responseLogprobs",
		"response_logprobs", "logprobs", "enableEnhancedCivicAnswers", "speechConfig", "speech_config",
		"thinkingConfig", "thinking_config", "mediaResolution", "media_resolution", "responseModalities",
		"response_modalities", "imageConfig", "image_config",
	}
	geminiDataFields = []string{
		"text", "inlineData", "inline_data", "functionCall", "function_call", "functionResponse",
		"function_response", "fileData", "file_data", "executableCode", "executable_code",
		"codeExecutionResult", "code_execution_result",
	}
)

type geminiPart struct {
	Text       *string `json:"text"`
	InlineData *struct {
		MimeType string `json:"mimeType"`
		Data     string `json:"data"`
	} `json:"inlineData"`
	FunctionCall *struct {
		Name string         `json:"name"`
		Args map[string]any `json:"args"`
	} `json:"functionCall"`
	FunctionResponse *struct {
		Name     string          `json:"name"`
		Response json.RawMessage `json:"response"`
	} `json:"functionResponse"`
}

type geminiContent struct {
	Role  string                       `json:"role"`
	Parts []map[string]json.RawMessage `json:"parts"`
}

type geminiRequest struct {
	Contents []geminiContent `json:"contents"`
	Tools    []struct {
		FunctionDeclarations []struct {
			Name string `json:"name"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
}

// geminiFake serves models/{model}:generateContent and
// :streamGenerateContent (SSE with alt=sse, else a JSON array) like the
// Gemini API.
func geminiFake(model, key string) func(rc *recorder, w http.ResponseWriter, r *http.Request) {
	return dialect{
		kind: "gemini",
		check: func(r *http.Request) (func(http.ResponseWriter, reply), turn, string) {
			stream, t, problem := checkGemini(r, model, key)
			return func(w http.ResponseWriter, rep reply) {
				switch {
				case !stream:
					writeJSON(w, http.StatusOK, geminiChunk(model, geminiParts(rep), true, fakeOutputTokens))
				case r.URL.Query().Get("alt") == "sse":
					streamGemini(newSSE(w).send, model, rep)
				default:
					streamGeminiArray(w, model, rep)
				}
			}, t, problem
		},
		error: func(status int, msg string) any {
			st := "INVALID_ARGUMENT"
			if status >= 500 {
				st = "INTERNAL"
			}
			return map[string]any{"error": map[string]any{"code": status, "message": msg, "status": st}}
		},
	}.handler(model)
}

func checkGemini(r *http.Request, model, key string) (stream bool, t turn, problem string) {
	action, ok := geminiAction(r.URL.Path, model)
	switch {
	case r.Method != http.MethodPost || !ok:
		return false, t, fmt.Sprintf("expected POST /v1beta/models/%s:generateContent or :streamGenerateContent", model)
	case r.Header.Get("x-goog-api-key") != key && r.URL.Query().Get("key") != key:
		return false, t, fmt.Sprintf("expected x-goog-api-key: <channel key>, got %q", redact(r.Header.Get("x-goog-api-key")))
	}
	var raw map[string]json.RawMessage
	var req geminiRequest
	body, err := readBody(r)
	if err == nil {
		err = json.Unmarshal(body, &raw)
	}
	if err == nil {
		err = json.Unmarshal(body, &req)
	}
	if err != nil {
		return false, t, "body is not a generateContent request: " + err.Error()
	}
	if bad := unknownKeys(raw, geminiFields...); len(bad) > 0 {
		return false, t, "Invalid JSON payload received. Unknown name " + strings.Join(bad, ", ")
	}
	if problem := geminiConfigProblem(raw); problem != "" {
		return false, t, problem
	}
	t, problem = geminiTurn(&req)
	t.settings = geminiSettings(raw)
	return action == "streamGenerateContent", t, problem
}

// geminiSettings reads the system instruction, turn count and generation
// config under either spelling of their names.
func geminiSettings(raw map[string]json.RawMessage) settings {
	pick := func(m map[string]json.RawMessage, camel, snake string) json.RawMessage {
		if v, ok := m[camel]; ok {
			return v
		}
		return m[snake]
	}
	var s settings
	var contents []json.RawMessage
	_ = json.Unmarshal(raw["contents"], &contents)
	s.turns = len(contents)
	var sys struct {
		Parts []struct {
			Text string `json:"text"`
		} `json:"parts"`
	}
	_ = json.Unmarshal(pick(raw, "systemInstruction", "system_instruction"), &sys)
	for _, p := range sys.Parts {
		s.system += p.Text
	}
	var cfg map[string]json.RawMessage
	_ = json.Unmarshal(pick(raw, "generationConfig", "generation_config"), &cfg)
	s.maxTokens = floatPtr(pick(cfg, "maxOutputTokens", "max_output_tokens"))
	s.temperature = floatPtr(cfg["temperature"])
	s.topP = floatPtr(pick(cfg, "topP", "top_p"))
	_ = json.Unmarshal(pick(cfg, "stopSequences", "stop_sequences"), &s.stop)
	return s
}

func geminiAction(path, model string) (string, bool) {
	for _, prefix := range []string{"/v1beta/models/", "/v1/models/"} {
		if rest, ok := strings.CutPrefix(path, prefix); ok {
			m, action, _ := strings.Cut(rest, ":")
			return action, m == model && (action == "generateContent" || action == "streamGenerateContent")
		}
	}
	return "", false
}

func geminiConfigProblem(raw map[string]json.RawMessage) string {
	for _, name := range []string{"generationConfig", "generation_config"} {
		if cfg, ok := raw[name]; ok {
			var fields map[string]json.RawMessage
			if json.Unmarshal(cfg, &fields) != nil {
				return name + " is not an object"
			}
			if bad := unknownKeys(fields, geminiConfigFields...); len(bad) > 0 {
				return "Invalid JSON payload received. Unknown name " + strings.Join(bad, ", ") + " at " + name
			}
		}
	}
	return ""
}

// geminiTurn validates the conversation as the API does (roles user/model,
// parts carrying data, function responses answering an earlier call) and
// extracts the last turn.
func geminiTurn(req *geminiRequest) (turn, string) {
	t := turn{tools: map[string]bool{}}
	if len(req.Contents) == 0 {
		return t, "contents is not specified"
	}
	for _, tl := range req.Tools {
		for _, fd := range tl.FunctionDeclarations {
			t.tools[fd.Name] = true
		}
	}
	called := map[string]bool{}
	for i, c := range req.Contents {
		if c.Role != "user" && c.Role != "model" && c.Role != "" {
			return t, fmt.Sprintf("contents[%d].role %q: please use a valid role: user, model", i, c.Role)
		}
		if len(c.Parts) == 0 {
			return t, fmt.Sprintf("contents[%d].parts must not be empty", i)
		}
		t.userText, t.toolResult, t.images = "", "", nil
		for j, raw := range c.Parts {
			if msg := geminiPartProblem(c.Role, raw, called, &t); msg != "" {
				return t, fmt.Sprintf("contents[%d].parts[%d]: %s", i, j, msg)
			}
		}
	}
	return t, ""
}

func geminiPartProblem(role string, raw map[string]json.RawMessage, called map[string]bool, t *turn) string {
	if len(unknownKeys(raw, geminiDataFields...)) == len(raw) {
		return "required oneof field 'data' must have one initialized field"
	}
	var p geminiPart
	enc, _ := json.Marshal(raw)
	if err := json.Unmarshal(enc, &p); err != nil {
		return err.Error()
	}
	switch {
	case p.FunctionCall != nil:
		if role != "model" || p.FunctionCall.Name == "" {
			return "a functionCall needs a model turn and a name"
		}
		called[p.FunctionCall.Name] = true
	case p.FunctionResponse != nil:
		var obj map[string]any
		if json.Unmarshal(p.FunctionResponse.Response, &obj) != nil || obj == nil {
			return "functionResponse.response must be an object"
		}
		if role == "model" || !called[p.FunctionResponse.Name] {
			return fmt.Sprintf("functionResponse %q answers no functionCall of an earlier model turn", p.FunctionResponse.Name)
		}
		t.toolResult += string(p.FunctionResponse.Response)
	case p.InlineData != nil:
		desc, ok := describeImage(p.InlineData.MimeType, p.InlineData.Data)
		if !ok {
			return "inlineData needs a mimeType and base64 data"
		}
		t.images = append(t.images, desc)
	case p.Text != nil && role != "model":
		t.userText += *p.Text
	}
	return ""
}

func geminiParts(rep reply) []any {
	if rep.toolCall {
		return []any{map[string]any{"functionCall": map[string]any{"name": weatherTool, "args": map[string]any{"city": "Paris"}}}}
	}
	return []any{map[string]any{"text": rep.text}}
}

// geminiChunk is one GenerateContentResponse; usage counts are cumulative
// in a stream, as the API reports them.
func geminiChunk(model string, parts []any, last bool, output int) map[string]any {
	cand := map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "index": 0}
	if last {
		cand["finishReason"] = "STOP"
	}
	return map[string]any{
		"candidates": []any{cand},
		"usageMetadata": map[string]any{"promptTokenCount": fakeInputTokens, "candidatesTokenCount": output,
			"totalTokenCount": fakeInputTokens + output},
		"modelVersion": model, "responseId": "fake-response",
	}
}

func geminiChunks(model string, rep reply) []map[string]any {
	if rep.toolCall { // the API sends a function call whole, in one chunk
		return []map[string]any{geminiChunk(model, geminiParts(rep), true, fakeOutputTokens)}
	}
	ps := pieces(rep.text)
	out := make([]map[string]any, len(ps))
	for i, p := range ps {
		last := i == len(ps)-1
		output := (i + 1) * fakeOutputTokens / len(ps)
		out[i] = geminiChunk(model, []any{map[string]any{"text": p}}, last, output)
	}
	return out
}

func streamGemini(send func(event string, v any), model string, rep reply) {
	for i, c := range geminiChunks(model, rep) {
		send("", c)
		rep.pauseAfter(i)
	}
}

// streamGeminiArray is the stream without alt=sse: one JSON array written
// element by element.
func streamGeminiArray(w http.ResponseWriter, model string, rep reply) {
	w.Header().Set("Content-Type", "application/json")
	fl, _ := w.(http.Flusher)
	for i, c := range geminiChunks(model, rep) {
		sep := ",\n"
		if i == 0 {
			sep = "["
		}
		b, _ := json.Marshal(c)
		fmt.Fprintf(w, "%s%s", sep, b)
		if fl != nil {
			fl.Flush()
		}
		rep.pauseAfter(i)
	}
	fmt.Fprint(w, "]")
}
