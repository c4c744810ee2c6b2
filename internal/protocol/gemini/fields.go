package gemini

import (
	"fmt"
	"math"
	"strconv"

	"github.com/tidwall/gjson"
	"github.com/turnpike-gw/turnpike/internal/ir"
)

// badField is the 400 for a client field that is missing, mistyped or out of
// range; param is the field's path as the client wrote it.
func badField(param, format string, args ...any) *ir.Error {
	e := ir.BadRequest("invalid_argument", "Invalid value at '%s': %s", param, fmt.Sprintf(format, args...))
	e.Param = param
	return e
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func index(path string, i int) string {
	return path + "[" + strconv.Itoa(i) + "]"
}

// present reports whether a field was given; JSON null counts as absent, as
// in the API's own proto3 JSON reading.
func present(v gjson.Result) bool {
	return v.Exists() && v.Type != gjson.Null
}

// eachField calls fn for every key of an object in order, stopping at the
// first error.
func eachField(obj gjson.Result, fn func(key string, v gjson.Result) error) error {
	var err error
	obj.ForEach(func(k, v gjson.Result) bool {
		err = fn(k.String(), v)
		return err == nil
	})
	return err
}

// eachElem calls fn for every element of an array in order.
func eachElem(arr gjson.Result, fn func(i int, v gjson.Result) error) error {
	var err error
	i := 0
	arr.ForEach(func(_, v gjson.Result) bool {
		err = fn(i, v)
		i++
		return err == nil
	})
	return err
}

func wantObject(v gjson.Result, path string) error {
	if !v.IsObject() {
		return badField(path, "expected an object")
	}
	return nil
}

func wantArray(v gjson.Result, path string) error {
	if !v.IsArray() {
		return badField(path, "expected an array")
	}
	return nil
}

func getString(v gjson.Result, path string) (string, error) {
	if v.Type != gjson.String {
		return "", badField(path, "expected a string")
	}
	return v.Str, nil
}

func getBool(v gjson.Result, path string) (bool, error) {
	if v.Type != gjson.True && v.Type != gjson.False {
		return false, badField(path, "expected a boolean")
	}
	return v.Type == gjson.True, nil
}

func getFloat(v gjson.Result, path string, lo, hi float64) (*float64, error) {
	if v.Type != gjson.Number {
		return nil, badField(path, "expected a number")
	}
	if v.Num < lo || v.Num > hi {
		return nil, badField(path, "must be between %g and %g", lo, hi)
	}
	f := v.Num
	return &f, nil
}

// getInt reads an int32 field; proto3 JSON also allows integers as strings.
func getInt(v gjson.Result, path string, lo, hi int64) (int64, error) {
	var n int64
	switch v.Type {
	case gjson.Number:
		if v.Num != math.Trunc(v.Num) || math.Abs(v.Num) > math.MaxInt32 {
			return 0, badField(path, "expected an integer")
		}
		n = int64(v.Num)
	case gjson.String:
		p, err := strconv.ParseInt(v.Str, 10, 32)
		if err != nil {
			return 0, badField(path, "expected an integer")
		}
		n = p
	default:
		return 0, badField(path, "expected an integer")
	}
	if n < lo || n > hi {
		return 0, badField(path, "must be between %d and %d", lo, hi)
	}
	return n, nil
}

func getStrings(v gjson.Result, path string) ([]string, error) {
	if err := wantArray(v, path); err != nil {
		return nil, err
	}
	var out []string
	err := eachElem(v, func(i int, e gjson.Result) error {
		s, err := getString(e, index(path, i))
		out = append(out, s)
		return err
	})
	return out, err
}
