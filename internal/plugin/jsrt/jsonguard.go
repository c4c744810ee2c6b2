package jsrt

import (
	"errors"
	"fmt"

	"github.com/grafana/sobek"
)

// guardJSONParse replaces JSON.parse with one that refuses, before parsing,
// a text longer than maxStringChars or nested deeper than maxJSONNesting:
// sobek's parser recurses on the Go stack once per level and cannot be
// interrupted, so a deep enough text would overflow the stack and end the
// process.
func guardJSONParse(rt *sobek.Runtime) error {
	jsonObj := rt.GlobalObject().Get("JSON").ToObject(rt)
	orig, ok := sobek.AssertFunction(jsonObj.Get("parse"))
	if !ok {
		return errors.New("jsrt: JSON.parse is missing")
	}
	return jsonObj.Set("parse", func(call sobek.FunctionCall) sobek.Value {
		text := call.Argument(0).String()
		if len(text) > maxStringChars {
			panic(rangeError(rt, "JSON text exceeds the plugin sandbox limit"))
		}
		if jsonNesting(text) > maxJSONNesting {
			panic(rangeError(rt, fmt.Sprintf("JSON nested deeper than %d levels exceeds the plugin sandbox limit", maxJSONNesting)))
		}
		v, err := orig(call.This, call.Arguments...)
		if err != nil {
			panic(err)
		}
		return v
	})
}

// jsonNesting is the deepest bracket nesting of text outside strings. It
// does not validate: the real parser does that afterwards.
func jsonNesting(text string) int {
	depth, deepest, inString := 0, 0, false
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case inString:
		case c == '[' || c == '{':
			depth++
			deepest = max(deepest, depth)
		case c == ']' || c == '}':
			depth--
		}
	}
	return deepest
}

func rangeError(rt *sobek.Runtime, msg string) sobek.Value {
	obj, err := rt.New(rt.GlobalObject().Get("RangeError"), rt.ToValue(msg))
	if err != nil {
		return rt.NewTypeError(msg)
	}
	return obj
}
