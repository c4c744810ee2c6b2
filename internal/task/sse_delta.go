package task

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/turnpike-gw/turnpike/internal/plugin/manifest"
)

// Limits of a delta-built submit result (PLUGIN-CONTEXT.md, host numbers).
const (
	maxDeltaChanges   = 256
	maxDeltaPath      = 32
	maxDeltaDepth     = 32
	maxDeltaNodes     = 32768
	maxSSEResultBytes = 1 << 20
)

// deltaDoc is the host-held result of a submit-sse-delta@1 stream. It keeps
// the JSON-encoded size and node count of root up to date with every change,
// so limits are checked without re-encoding the whole result per event.
type deltaDoc struct {
	root  any
	set   bool // root has been set (null is a valid result once set)
	size  int64
	nodes int64
}

// change is one validated delta change.
type change struct {
	op    string
	path  []any // string keys and int indices
	value any
}

// parseChanges validates the changes array of one delta result.
func parseChanges(v any) ([]change, error) {
	if v == nil {
		return nil, nil
	}
	items, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("changes must be an array")
	}
	if len(items) > maxDeltaChanges {
		return nil, fmt.Errorf("%d changes in one event, more than %d", len(items), maxDeltaChanges)
	}
	out := make([]change, 0, len(items))
	for i, it := range items {
		m, ok := it.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("changes[%d] must be an object {op, path, value}", i)
		}
		c := change{value: m["value"]}
		c.op, _ = m["op"].(string)
		switch c.op {
		case "set", "append":
		case "appendText":
			if _, ok := c.value.(string); !ok {
				return nil, fmt.Errorf("changes[%d]: appendText needs a string value", i)
			}
		default:
			return nil, fmt.Errorf("changes[%d].op must be set, append or appendText", i)
		}
		path, err := parsePath(m["path"])
		if err != nil {
			return nil, fmt.Errorf("changes[%d].path %v", i, err)
		}
		c.path = path
		out = append(out, c)
	}
	return out, nil
}

func parsePath(v any) ([]any, error) {
	items, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("must be an array of keys and indices")
	}
	if len(items) > maxDeltaPath {
		return nil, fmt.Errorf("has %d segments, more than %d", len(items), maxDeltaPath)
	}
	path := make([]any, len(items))
	for i, seg := range items {
		switch s := seg.(type) {
		case string:
			path[i] = s
		default:
			n, ok := manifest.Number(seg)
			if !ok || n < 0 || n != math.Trunc(n) || n > maxDeltaNodes {
				return nil, fmt.Errorf("segment %d must be a key or a non-negative index", i)
			}
			path[i] = int(n)
		}
	}
	return path, nil
}

// apply carries out one change, keeping size and nodes current, and checks
// the limits after it.
func (d *deltaDoc) apply(c change) error {
	vs, vn, vd, err := measure(c.value)
	if err != nil {
		return err
	}
	if len(c.path) == 0 {
		if c.op != "set" {
			return fmt.Errorf("%s needs a path inside the result", c.op)
		}
		if vd > maxDeltaDepth {
			return fmt.Errorf("the result would nest more than %d levels", maxDeltaDepth)
		}
		d.root, d.set, d.size, d.nodes = c.value, true, vs, vn
		return d.check()
	}
	if !d.set || d.root == nil {
		d.root, d.set, d.size, d.nodes = map[string]any{}, true, 2, 1
	}
	if len(c.path)+vd > maxDeltaDepth {
		return fmt.Errorf("the result would nest more than %d levels", maxDeltaDepth)
	}
	parent, err := d.parentOf(c.path)
	if err != nil {
		return err
	}
	switch c.op {
	case "set":
		err = d.setIn(parent, c.path[len(c.path)-1], c.value, vs, vn)
	case "append":
		err = d.appendIn(parent, c.path[len(c.path)-1], c.value, vs, vn)
	default:
		err = d.appendTextIn(parent, c.path[len(c.path)-1], c.value.(string))
	}
	if err != nil {
		return err
	}
	return d.check()
}

func (d *deltaDoc) check() error {
	if d.size > maxSSEResultBytes {
		return fmt.Errorf("the result would be %d bytes, more than %d", d.size, maxSSEResultBytes)
	}
	if d.nodes > maxDeltaNodes {
		return fmt.Errorf("the result would have %d nodes, more than %d", d.nodes, maxDeltaNodes)
	}
	return nil
}

// parentOf walks to the container holding the path's last segment,
// creating missing object members as empty objects on the way.
func (d *deltaDoc) parentOf(path []any) (any, error) {
	cur := d.root
	for i, seg := range path[:len(path)-1] {
		switch c := cur.(type) {
		case map[string]any:
			key, ok := seg.(string)
			if !ok {
				return nil, fmt.Errorf("path segment %d indexes an object with a number", i)
			}
			next, present := c[key]
			if !present || next == nil {
				next = map[string]any{}
				if err := d.setIn(c, key, next, 2, 1); err != nil {
					return nil, err
				}
			}
			cur = next
		case []any:
			idx, ok := seg.(int)
			if !ok || idx >= len(c) {
				return nil, fmt.Errorf("path segment %d is not an index of the array", i)
			}
			cur = c[idx]
		default:
			return nil, fmt.Errorf("path segment %d goes inside a value that is not an object or array", i)
		}
	}
	return cur, nil
}

// setIn sets parent[seg] = v, whose encoding is vs bytes and vn nodes.
func (d *deltaDoc) setIn(parent any, seg any, v any, vs, vn int64) error {
	switch c := parent.(type) {
	case map[string]any:
		key, ok := seg.(string)
		if !ok {
			return fmt.Errorf("an object member needs a string key")
		}
		if old, present := c[key]; present {
			os, on, _, _ := measure(old)
			d.size += vs - os
			d.nodes += vn - on
		} else {
			d.size += keySize(key) + vs
			if len(c) > 0 {
				d.size++
			}
			d.nodes += vn
		}
		c[key] = v
		return nil
	case []any:
		idx, ok := seg.(int)
		if !ok || idx >= len(c) {
			return fmt.Errorf("set needs an existing array index (use append to add)")
		}
		os, on, _, _ := measure(c[idx])
		d.size += vs - os
		d.nodes += vn - on
		c[idx] = v
		return nil
	}
	return fmt.Errorf("set goes inside a value that is not an object or array")
}

// appendIn appends v to the array at parent[seg], creating it when absent.
func (d *deltaDoc) appendIn(parent any, seg any, v any, vs, vn int64) error {
	cur, present, err := member(parent, seg)
	if err != nil {
		return err
	}
	if !present || cur == nil {
		return d.setIn(parent, seg, []any{v}, vs+2, vn+1)
	}
	arr, ok := cur.([]any)
	if !ok {
		return fmt.Errorf("append targets a value that is not an array")
	}
	d.size += vs
	if len(arr) > 0 {
		d.size++
	}
	d.nodes += vn
	return replaceMember(parent, seg, append(arr, v))
}

// appendTextIn appends text to the string at parent[seg], creating it when
// absent. JSON escaping is per character, so the size grows by the
// escaped length of text alone.
func (d *deltaDoc) appendTextIn(parent any, seg any, text string) error {
	cur, present, err := member(parent, seg)
	if err != nil {
		return err
	}
	ts := strSize(text) - 2
	if !present || cur == nil {
		return d.setIn(parent, seg, text, ts+2, 1)
	}
	s, ok := cur.(string)
	if !ok {
		return fmt.Errorf("appendText targets a value that is not a string")
	}
	d.size += ts
	return replaceMember(parent, seg, s+text)
}

// member reads parent[seg]; an array index must exist.
func member(parent any, seg any) (any, bool, error) {
	switch c := parent.(type) {
	case map[string]any:
		key, ok := seg.(string)
		if !ok {
			return nil, false, fmt.Errorf("an object member needs a string key")
		}
		v, present := c[key]
		return v, present, nil
	case []any:
		idx, ok := seg.(int)
		if !ok || idx >= len(c) {
			return nil, false, fmt.Errorf("the path's last index is not in the array")
		}
		return c[idx], true, nil
	}
	return nil, false, fmt.Errorf("the path goes inside a value that is not an object or array")
}

// replaceMember stores v without changing the counters (the caller did).
func replaceMember(parent any, seg any, v any) error {
	switch c := parent.(type) {
	case map[string]any:
		c[seg.(string)] = v
	case []any:
		c[seg.(int)] = v
	}
	return nil
}

// strSize is the encoded size of a string, quotes included.
func strSize(s string) int64 {
	b, _ := json.Marshal(s)
	return int64(len(b))
}

// keySize is what an object key adds: the encoded key and its colon.
func keySize(s string) int64 { return strSize(s) + 1 }

// measure returns a value's encoded size, node count and nesting depth.
func measure(v any) (size, nodes int64, depth int, err error) {
	b, err := json.Marshal(v)
	if err != nil {
		return 0, 0, 0, fmt.Errorf("a change value is not JSON")
	}
	nodes, depth = countNodes(v)
	return int64(len(b)), nodes, depth, nil
}

func countNodes(v any) (int64, int) {
	switch x := v.(type) {
	case map[string]any:
		n, d := int64(1), 0
		for _, it := range x {
			cn, cd := countNodes(it)
			n += cn
			d = max(d, cd)
		}
		return n, d + 1
	case []any:
		n, d := int64(1), 0
		for _, it := range x {
			cn, cd := countNodes(it)
			n += cn
			d = max(d, cd)
		}
		return n, d + 1
	}
	return 1, 1
}
