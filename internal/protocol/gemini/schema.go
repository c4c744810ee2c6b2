package gemini

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/tidwall/gjson"
)

// maxSchemaDepth bounds the recursion over client schemas.
const maxSchemaDepth = 64

// normalizeSchema turns the API's OpenAPI-subset schema (which allows
// upper-case type names such as "OBJECT") into JSON Schema the other formats
// accept, by lower-casing every "type" string. Key order is kept because
// models follow property order.
func normalizeSchema(v gjson.Result, p string) (json.RawMessage, error) {
	if err := wantObject(v, p); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if !writeSchema(&b, v, 0) {
		return nil, badField(p, "schema is nested too deeply")
	}
	return json.RawMessage(b.Bytes()), nil
}

func writeSchema(b *bytes.Buffer, v gjson.Result, depth int) bool {
	if depth > maxSchemaDepth {
		return false
	}
	ok := true
	switch {
	case v.IsObject():
		b.WriteByte('{')
		first := true
		v.ForEach(func(k, e gjson.Result) bool {
			if !first {
				b.WriteByte(',')
			}
			first = false
			b.WriteString(k.Raw)
			b.WriteByte(':')
			if k.String() == "type" && e.Type == gjson.String {
				lower, _ := json.Marshal(strings.ToLower(e.Str))
				b.Write(lower)
				return true
			}
			ok = writeSchema(b, e, depth+1)
			return ok
		})
		b.WriteByte('}')
	case v.IsArray():
		b.WriteByte('[')
		first := true
		v.ForEach(func(_, e gjson.Result) bool {
			if !first {
				b.WriteByte(',')
			}
			first = false
			ok = writeSchema(b, e, depth+1)
			return ok
		})
		b.WriteByte(']')
	default:
		b.WriteString(compactJSON(v.Raw))
	}
	return ok
}
