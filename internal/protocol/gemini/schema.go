package gemini

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/tidwall/gjson"
)

// maxSchemaDepth bounds the recursion over client schemas.
const maxSchemaDepth = 64

// normalizeSchema turns the API's OpenAPI-subset schema into JSON Schema the
// other formats accept: type names are lower-cased ("OBJECT" is allowed
// here), "nullable" becomes a "null" type, and the format-specific
// "propertyOrdering" is dropped (key order, which is kept, says the same).
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
		nullable := v.Get("nullable").Type == gjson.True
		b.WriteByte('{')
		first := true
		v.ForEach(func(k, e gjson.Result) bool {
			key := k.String()
			if key == "nullable" || key == "propertyOrdering" {
				return true
			}
			if !first {
				b.WriteByte(',')
			}
			first = false
			b.WriteString(k.Raw)
			b.WriteByte(':')
			if key == "type" && e.Type == gjson.String {
				writeType(b, strings.ToLower(e.Str), nullable)
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

func writeType(b *bytes.Buffer, t string, nullable bool) {
	name, _ := json.Marshal(t)
	if !nullable {
		b.Write(name)
		return
	}
	b.WriteByte('[')
	b.Write(name)
	b.WriteString(`,"null"]`)
}
