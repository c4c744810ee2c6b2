package egress

import (
	"encoding/base64"
	"maps"
	"math"
	"slices"
	"strconv"

	"github.com/turnpike-gw/turnpike/internal/plugin/manifest"
)

// maxPlaceholderDepth bounds the walk over a descriptor body. Hook results
// are already bounded by the runtime; this keeps a hostile nesting from
// exhausting the stack here.
const maxPlaceholderDepth = 128

// placeholderKey marks an object as a file placeholder.
const placeholderKey = "__fileRef"

// inlineFiles returns body with every file placeholder
// {__fileRef, encoding: "base64"|"dataUrl", mimeType?, maxBytes?} replaced
// by the encoded file, at any depth. Objects and arrays on the path to a
// placeholder are copied; the input is never changed.
func inlineFiles(body any, b *Budget) (any, error) {
	v, _, err := walkPlaceholders(body, b, 0, "body")
	return v, err
}

// walkPlaceholders returns v with its placeholders encoded, and whether
// anything changed (so untouched containers are shared, not copied).
func walkPlaceholders(v any, b *Budget, depth int, path string) (any, bool, error) {
	if depth > maxPlaceholderDepth {
		return nil, false, Errorf("%s is nested more than %d levels deep", path, maxPlaceholderDepth)
	}
	switch x := v.(type) {
	case map[string]any:
		if _, ok := x[placeholderKey]; ok {
			s, err := encodePlaceholder(x, b, path)
			return s, err == nil, err
		}
		var out map[string]any
		// Keys in order, so the file named in a cap error is always the same.
		for _, k := range slices.Sorted(maps.Keys(x)) {
			item := x[k]
			r, changed, err := walkPlaceholders(item, b, depth+1, path+"."+k)
			if err != nil {
				return nil, false, err
			}
			if changed && out == nil {
				out = maps.Clone(x)
			}
			if changed {
				out[k] = r
			}
		}
		if out == nil {
			return x, false, nil
		}
		return out, true, nil
	case []any:
		var out []any
		for i, item := range x {
			r, changed, err := walkPlaceholders(item, b, depth+1, path+"["+strconv.Itoa(i)+"]")
			if err != nil {
				return nil, false, err
			}
			if changed && out == nil {
				out = slices.Clone(x)
			}
			if changed {
				out[i] = r
			}
		}
		if out == nil {
			return x, false, nil
		}
		return out, true, nil
	}
	return v, false, nil
}

// encodePlaceholder validates one placeholder and returns its encoding.
func encodePlaceholder(m map[string]any, b *Budget, path string) (string, error) {
	ref, _ := m[placeholderKey].(string)
	if ref == "" {
		return "", Errorf("%s.__fileRef must be a file reference string", path)
	}
	enc, _ := m["encoding"].(string)
	if enc != "base64" && enc != "dataUrl" {
		return "", Errorf("%s.encoding must be \"base64\" or \"dataUrl\" for file %s", path, ref)
	}
	mime := ""
	if v, ok := m["mimeType"]; ok && v != nil {
		s, ok := v.(string)
		if !ok {
			return "", Errorf("%s.mimeType must be a string for file %s", path, ref)
		}
		mime = s
	}
	var maxBytes int64
	if v, ok := m["maxBytes"]; ok && v != nil {
		n, ok := manifest.Number(v)
		if !ok || n <= 0 || n != math.Trunc(n) || n > math.MaxInt64/2 {
			return "", Errorf("%s.maxBytes must be a positive integer for file %s", path, ref)
		}
		maxBytes = int64(n)
	}
	f, err := b.take(ref, maxBytes)
	if err != nil {
		return "", err
	}
	data, err := readAll(f)
	if err != nil {
		return "", err
	}
	s := base64.StdEncoding.EncodeToString(data)
	if enc == "base64" {
		return s, nil
	}
	if mime == "" {
		mime = f.MimeType
	}
	if mime == "" {
		mime = "application/octet-stream"
	}
	return "data:" + mime + ";base64," + s, nil
}
