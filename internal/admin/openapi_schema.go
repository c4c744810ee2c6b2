package admin

import (
	"encoding/json"
	"reflect"
	"strings"
	"time"
)

// schema is one JSON Schema (OpenAPI 3.1 uses JSON Schema 2020-12).
type schema = map[string]any

var (
	timeType   = reflect.TypeFor[time.Time]()
	rawType    = reflect.TypeFor[json.RawMessage]()
	numberType = reflect.TypeFor[json.Number]()
)

// schemaOf describes a Go type as the API writes it with encoding/json, so
// an answer's schema is read off the very type the handler encodes and
// cannot drift from it.
func schemaOf[T any]() schema { return typeSchema(reflect.TypeFor[T]()) }

func typeSchema(t reflect.Type) schema {
	switch {
	case t == timeType:
		return schema{"type": "string", "format": "date-time"}
	case t == rawType:
		return schema{}
	case t == numberType:
		return schema{"type": "number"} // encoding/json writes its digits as a number
	}
	switch t.Kind() {
	case reflect.Pointer:
		s := typeSchema(t.Elem())
		return nullable(s)
	case reflect.String:
		return schema{"type": "string"}
	case reflect.Bool:
		return schema{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return schema{"type": "integer"}
	case reflect.Float32, reflect.Float64:
		return schema{"type": "number"}
	case reflect.Slice, reflect.Array:
		return schema{"type": "array", "items": typeSchema(t.Elem())}
	case reflect.Map:
		return schema{"type": "object", "additionalProperties": typeSchema(t.Elem())}
	case reflect.Struct:
		props := schema{}
		var required []string
		addFields(t, props, &required)
		s := schema{"type": "object", "properties": props}
		if len(required) > 0 {
			s["required"] = required
		}
		return s
	}
	return schema{}
}

// addFields lists a struct's JSON members; embedded structs without a tag
// are flattened, as encoding/json does. Members without omitempty are
// always present in an answer, hence required.
func addFields(t reflect.Type, props schema, required *[]string) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			addFields(f.Type, props, required)
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		props[name] = typeSchema(f.Type)
		if !strings.Contains(opts, "omitempty") {
			*required = append(*required, name)
		}
	}
}

// nullable lets s also be null.
func nullable(s schema) schema {
	out := schema{}
	for k, v := range s {
		out[k] = v
	}
	if t, ok := s["type"].(string); ok {
		out["type"] = []string{t, "null"}
	}
	return out
}

func ref(name string) schema { return schema{"$ref": "#/components/schemas/" + name} }

func listOf(item schema) schema {
	return schema{"type": "object", "required": []string{"items", "total"}, "properties": schema{
		"items": schema{"type": "array", "items": item},
		"total": schema{"type": "integer"},
	}}
}

// object is a schema of named members, none of them required.
func object(members schema) schema { return schema{"type": "object", "properties": members} }

// body is a request body of exactly the members a handler accepts
// (readFields refuses any other): each takes its schema from the
// resource's answer when it has the same name there, else from extra.
func body(like schema, names []string, extra schema, required ...string) schema {
	props := schema{}
	src, _ := like["properties"].(schema)
	for _, n := range names {
		if s, ok := extra[n]; ok {
			props[n] = s
		} else if s, ok := src[n]; ok {
			props[n] = s
		} else {
			props[n] = schema{}
		}
	}
	s := schema{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

var (
	str     = schema{"type": "string"}
	integer = schema{"type": "integer"}
	number  = schema{"type": "number"}
	boolean = schema{"type": "boolean"}
	anyObj  = schema{"type": "object"}
	strList = schema{"type": "array", "items": str}
	paging  = []string{"page", "page_size"}
)
