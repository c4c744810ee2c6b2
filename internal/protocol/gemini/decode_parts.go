package gemini

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/turnpike-gw/turnpike/internal/ir"
)

// inPart is one decoded request part before it is placed into IR messages,
// which depends on the turn's role.
type inPart struct {
	hasText bool
	text    string
	thought bool
	sig     string
	media   *ir.Media
	call    *ir.ToolCall
	resp    *inResponse
}

type inResponse struct {
	id, name string
	response gjson.Result
}

const partDataFields = "text, inlineData, fileData, functionCall or functionResponse"

func decodePart(v gjson.Result, p string) (inPart, error) {
	var out inPart
	if err := wantObject(v, p); err != nil {
		return out, err
	}
	data := 0
	err := eachField(v, func(key string, f gjson.Result) error {
		if !present(f) {
			return nil
		}
		fp := join(p, key)
		var err error
		switch key {
		case "text":
			data++
			out.hasText = true
			out.text, err = getString(f, fp)
		case "thought":
			out.thought, err = getBool(f, fp)
		case "thoughtSignature", "thought_signature":
			out.sig, err = getString(f, fp)
		case "inlineData", "inline_data":
			data++
			out.media, err = decodeBlob(f, fp)
		case "fileData", "file_data":
			data++
			out.media, err = decodeFileData(f, fp)
		case "functionCall", "function_call":
			data++
			out.call, err = decodeFunctionCall(f, fp)
		case "functionResponse", "function_response":
			data++
			out.resp, err = decodeFunctionResponse(f, fp)
		case "executableCode", "executable_code", "codeExecutionResult", "code_execution_result":
			// Valid for passthrough; CheckConvertible refuses them for conversion.
			data++
		}
		return err
	})
	if err != nil {
		return out, err
	}
	switch {
	case data == 0:
		return out, badField(p, "a part needs one data field: %s", partDataFields)
	case data > 1:
		return out, badField(p, "a part takes exactly one data field of %s", partDataFields)
	}
	return out, nil
}

func decodeBlob(v gjson.Result, p string) (*ir.Media, error) {
	if err := wantObject(v, p); err != nil {
		return nil, err
	}
	m := &ir.Media{}
	err := eachField(v, func(key string, f gjson.Result) error {
		var err error
		switch key {
		case "mimeType", "mime_type":
			m.MIMEType, err = getString(f, join(p, key))
		case "data":
			m.Data, err = getString(f, join(p, key))
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if m.MIMEType == "" {
		return nil, badField(join(p, "mimeType"), "is required")
	}
	if m.Data == "" {
		return nil, badField(join(p, "data"), "is required")
	}
	return m, nil
}

func decodeFileData(v gjson.Result, p string) (*ir.Media, error) {
	if err := wantObject(v, p); err != nil {
		return nil, err
	}
	m := &ir.Media{}
	err := eachField(v, func(key string, f gjson.Result) error {
		var err error
		switch key {
		case "mimeType", "mime_type":
			m.MIMEType, err = getString(f, join(p, key))
		case "fileUri", "file_uri":
			m.URL, err = getString(f, join(p, key))
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if m.URL == "" {
		return nil, badField(join(p, "fileUri"), "is required")
	}
	return m, nil
}

func decodeFunctionCall(v gjson.Result, p string) (*ir.ToolCall, error) {
	if err := wantObject(v, p); err != nil {
		return nil, err
	}
	c := &ir.ToolCall{Arguments: "{}"}
	err := eachField(v, func(key string, f gjson.Result) error {
		var err error
		switch key {
		case "id":
			c.ID, err = getString(f, join(p, key))
		case "name":
			c.Name, err = getString(f, join(p, key))
		case "args":
			if present(f) {
				if err = wantObject(f, join(p, key)); err == nil {
					c.Arguments = compactJSON(f.Raw)
				}
			}
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if c.Name == "" {
		return nil, badField(join(p, "name"), "is required")
	}
	return c, nil
}

func decodeFunctionResponse(v gjson.Result, p string) (*inResponse, error) {
	if err := wantObject(v, p); err != nil {
		return nil, err
	}
	r := &inResponse{}
	err := eachField(v, func(key string, f gjson.Result) error {
		var err error
		switch key {
		case "id":
			r.id, err = getString(f, join(p, key))
		case "name":
			r.name, err = getString(f, join(p, key))
		case "response":
			if present(f) {
				err = wantObject(f, join(p, key))
				r.response = f
			}
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if r.name == "" {
		return nil, badField(join(p, "name"), "is required")
	}
	return r, nil
}

// resultContent turns a functionResponse.response object into tool result
// content. The common one-key wrappers become plain text so the other formats
// (which carry results as text) see the value, not the wrapper.
func resultContent(resp gjson.Result) ([]ir.Part, bool) {
	if !resp.Exists() {
		return nil, false
	}
	var only string
	var val gjson.Result
	n := 0
	resp.ForEach(func(k, v gjson.Result) bool {
		n++
		only, val = k.String(), v
		return n < 2
	})
	if n == 1 && val.Type == gjson.String {
		switch only {
		case "result", "output", "content":
			return []ir.Part{{Kind: ir.PartText, Text: val.Str}}, false
		case "error":
			return []ir.Part{{Kind: ir.PartText, Text: val.Str}}, true
		}
	}
	return []ir.Part{{Kind: ir.PartText, Text: compactJSON(resp.Raw)}}, false
}

// mediaPart picks image or file by MIME type, guessing it from the URI's
// extension when the client left it out.
func mediaPart(m *ir.Media) ir.Part {
	mt := m.MIMEType
	if mt == "" {
		mt = mimeFromExt(m.URL)
	}
	if strings.HasPrefix(mt, "image/") {
		return ir.Part{Kind: ir.PartImage, Media: m}
	}
	return ir.Part{Kind: ir.PartFile, Media: m}
}

func compactJSON(raw string) string {
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(raw)); err != nil {
		return raw
	}
	return b.String()
}
