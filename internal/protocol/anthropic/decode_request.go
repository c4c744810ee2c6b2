package anthropic

import (
	"math"

	"github.com/tidwall/gjson"
	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol"
)

// DecodeRequest parses a client's /v1/messages body. Unknown fields are
// ignored: when the upstream speaks this format too, the raw body is relayed.
func (Codec) DecodeRequest(body []byte) (*ir.Request, error) {
	if valid, dup := protocol.CheckMembers(body); !valid {
		return nil, badParam("", codeInvalidJSON, "request body is not valid JSON")
	} else if dup != nil {
		return nil, dup
	}
	root := gjson.ParseBytes(body)
	if !root.IsObject() {
		return nil, badParam("", codeInvalidType, "request body must be a JSON object")
	}
	req := &ir.Request{}
	steps := []func(gjson.Result, *ir.Request) *ir.Error{
		decodeModel, decodeMaxTokens, decodeSampling, decodeSystem,
		decodeMessages, decodeTools, decodeToolChoice, decodeThinking,
		decodeMetadata, decodeOutputFormat,
	}
	for _, step := range steps {
		if err := step(root, req); err != nil {
			return nil, err
		}
	}
	return req, nil
}

func decodeModel(root gjson.Result, req *ir.Request) *ir.Error {
	m := root.Get("model")
	if !m.Exists() || m.Type == gjson.Null {
		return badParam("model", codeMissing, "model: field required")
	}
	s, err := wantString(m, "model")
	if err != nil {
		return err
	}
	if s == "" {
		return badParam("model", codeInvalidVal, "model: must not be empty")
	}
	req.Model = s
	return nil
}

func decodeMaxTokens(root gjson.Result, req *ir.Request) *ir.Error {
	m := root.Get("max_tokens")
	if !m.Exists() || m.Type == gjson.Null {
		return badParam("max_tokens", codeMissing, "max_tokens: field required")
	}
	n, err := wantInt(m, "max_tokens")
	if err != nil {
		return err
	}
	if n < 1 {
		return badParam("max_tokens", codeInvalidVal, "max_tokens: must be greater than or equal to 1")
	}
	if n > math.MaxInt32 {
		// It reaches price arithmetic as the reservation's output.
		return badParam("max_tokens", codeInvalidVal, "max_tokens: must be less than or equal to %d", math.MaxInt32)
	}
	req.MaxTokens = &n
	return nil
}

func decodeSampling(root gjson.Result, req *ir.Request) *ir.Error {
	var err *ir.Error
	if req.Temperature, err = optFloat(root.Get("temperature"), "temperature", 0, 1); err != nil {
		return err
	}
	if req.TopP, err = optFloat(root.Get("top_p"), "top_p", 0, 1); err != nil {
		return err
	}
	if k := root.Get("top_k"); k.Exists() && k.Type != gjson.Null {
		n, err := wantInt(k, "top_k")
		if err != nil {
			return err
		}
		if n < 0 {
			return badParam("top_k", codeInvalidVal, "top_k: must be greater than or equal to 0")
		}
		req.TopK = &n
	}
	if req.Stream, err = optBool(root.Get("stream"), "stream"); err != nil {
		return err
	}
	return decodeStopSequences(root.Get("stop_sequences"), req)
}

func decodeStopSequences(r gjson.Result, req *ir.Request) *ir.Error {
	if !r.Exists() || r.Type == gjson.Null {
		return nil
	}
	if !r.IsArray() {
		return badParam("stop_sequences", codeInvalidType, "stop_sequences: expected an array of strings")
	}
	for i, s := range r.Array() {
		v, err := wantString(s, idx("stop_sequences", i))
		if err != nil {
			return err
		}
		req.Stop = append(req.Stop, v)
	}
	return nil
}

// decodeSystem accepts a string or an array of text blocks.
func decodeSystem(root gjson.Result, req *ir.Request) *ir.Error {
	s := root.Get("system")
	switch {
	case !s.Exists() || s.Type == gjson.Null:
		return nil
	case s.Type == gjson.String:
		if s.Str != "" {
			req.System = []ir.Part{{Kind: ir.PartText, Text: s.Str}}
		}
		return nil
	case !s.IsArray():
		return badParam("system", codeInvalidType, "system: expected a string or an array of text blocks")
	}
	for i, b := range s.Array() {
		param := idx("system", i)
		if err := wantObject(b, param); err != nil {
			return err
		}
		if t := b.Get("type").Str; t != "text" {
			return badParam(param+".type", codeInvalidVal, "%s.type: system blocks must be text blocks", param)
		}
		text, err := wantString(b.Get("text"), param+".text")
		if err != nil {
			return err
		}
		req.System = append(req.System, ir.Part{Kind: ir.PartText, Text: text, CacheControl: rawOrNil(b.Get("cache_control"))})
	}
	return nil
}

func decodeMetadata(root gjson.Result, req *ir.Request) *ir.Error {
	m := root.Get("metadata")
	if !m.Exists() || m.Type == gjson.Null {
		return nil
	}
	if err := wantObject(m, "metadata"); err != nil {
		return err
	}
	user, err := optString(m.Get("user_id"), "metadata.user_id")
	if err != nil {
		return err
	}
	req.User = user
	return nil
}

// decodeOutputFormat reads structured-output requests: output_config.format,
// or the older top-level output_format it replaced.
func decodeOutputFormat(root gjson.Result, req *ir.Request) *ir.Error {
	param := "output_config.format"
	f := root.Get("output_config.format")
	if !f.Exists() || f.Type == gjson.Null {
		param, f = "output_format", root.Get("output_format")
	}
	if !f.Exists() || f.Type == gjson.Null {
		return nil
	}
	if err := wantObject(f, param); err != nil {
		return err
	}
	if t := f.Get("type").Str; t != "json_schema" {
		return badParam(param+".type", codeInvalidVal, "%s.type: only json_schema is supported", param)
	}
	schema := f.Get("schema")
	if err := wantObject(schema, param+".schema"); err != nil {
		return err
	}
	// The format has no schema name; formats that require one get a neutral name.
	req.ResponseFormat = &ir.ResponseFormat{Type: "json_schema", Name: "response", Schema: rawOrNil(schema), Strict: true}
	return nil
}
