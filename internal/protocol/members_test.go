package protocol_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/protocol"
)

func TestCheckMembersFindsTheFirstRepeatedMember(t *testing.T) {
	cases := []struct {
		name, body, dup string
	}{
		{"a plain body", `{"model":"m1","messages":[{"role":"user","content":"hi"}],"stream":true}`, ""},
		{"the model twice", `{"model":"m1","messages":[],"model":"o1-pro"}`, "model"},
		{"the model spelled with an escape", `{"model":"m1","mod\u0065l":"o1-pro"}`, "model"},
		{"the model in another case", `{"model":"m1","Model":"o1-pro"}`, "Model"},
		{"the same name in sibling objects", `{"messages":[{"role":"user"},{"role":"assistant"}]}`, ""},
		{"the same name at two depths", `{"stream":true,"stream_options":{"stream":false}}`, ""},
		{"case differs below the top", `{"metadata":{"id":"a","ID":"b"}}`, ""},
		{"stream_options", `{"stream_options":{"include_usage":true,"include_usage":false}}`, "stream_options.include_usage"},
		{"a tools entry", `{"tools":[{"type":"function"},{"type":"function","name":"a","name":"b"}]}`, "tools[1].name"},
		{"deep in generationConfig", `{"generationConfig":{"thinkingConfig":{"thinkingBudget":1,"thinkingBudget":9}}}`, "generationConfig.thinkingConfig.thinkingBudget"},
		{"a batch line's body", `{"custom_id":"a","body":{"model":"m1","max_tokens":5,"max_tokens":500000}}`, "body.max_tokens"},
		{"a surrogate pair against its character", `{"\ud83d\ude00":1,"😀":2}`, "😀"},
		{"a non-ASCII name, once each", `{"é":1,"e":2}`, ""},
		{"a large object", `{` + manyMembers(100, "k") + `,"k7":0}`, "k7"},
		{"a large object without repeats", `{` + manyMembers(100, "k") + `}`, ""},
		{"a large top-level object in another case", `{` + manyMembers(100, "k") + `,"K7":0}`, "K7"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			valid, dup := protocol.CheckMembers([]byte(tc.body))
			if !valid {
				t.Fatal("a valid body was refused as invalid")
			}
			switch {
			case tc.dup == "" && dup != nil:
				t.Fatalf("refused %q: %v", dup.Param, dup)
			case tc.dup != "" && dup == nil:
				t.Fatalf("the repeated %q went through", tc.dup)
			case tc.dup != "":
				if dup.Status != 400 || dup.Code != "duplicate_member" || dup.Param != tc.dup || !strings.Contains(dup.Message, `"`+tc.dup+`"`) {
					t.Fatalf("error %d %s param %q message %q, want 400 duplicate_member naming %q", dup.Status, dup.Code, dup.Param, dup.Message, tc.dup)
				}
			}
		})
	}
}

func manyMembers(n int, prefix string) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"` + prefix + strconv.Itoa(i) + `":` + strconv.Itoa(i))
	}
	return b.String()
}


func TestCheckMembersAgreesWithEncodingJSONOnValidity(t *testing.T) {
	bodies := []string{
		``, ` `, `{}`, `[]`, `{"a":1}`, `{"a":1,}`, `[1,]`, `{"a"}`, `{"a":}`, `{,}`, `{"a":1 "b":2}`,
		`"x"`, `"\x"`, `"\u12"`, `"\u12G4"`, "\"\x01\"", "\"\xff\"", `01`, `-`, `-0`, `1.`, `1.e5`, `1e`, `1e+`, `1E-7`,
		`tru`, `true `, `nul`, `[true,false,null]`, `{"a":[{"b":{}}]}`, `{"a":1}}`, `[[]`, `{"a":1} {}`,
		strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
		strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
		strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat("}", 10000),
	}
	for _, b := range bodies {
		valid, _ := protocol.CheckMembers([]byte(b))
		if want := json.Valid([]byte(b)); valid != want {
			t.Errorf("%.40q: valid %v, encoding/json says %v", b, valid, want)
		}
	}
}

// FuzzCheckMembersAgreesWithAMapDecoder holds the scanner to encoding/json
// on validity and to a decoder that keeps each object's names in a map on
// repeats (names compared without case in the top-level object).
func FuzzCheckMembersAgreesWithAMapDecoder(f *testing.F) {
	for _, s := range []string{`{"model":"a","model":"b"}`, `{"a":{"b":1,"b\u0000":2}}`, `{"\ud800":1,"\udc00":2}`,
		`{"x":[{"k":1},{"k":2,"K":3}]}`, `{"é":1,"É":2}`, `{"k":1,"\u212a":2}`, `[1,2,{"a":"\"","b":-0.5e3}]`, "{\"\xff\":1,\"\xfe\":2}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		valid, dup := protocol.CheckMembers(b)
		if want := json.Valid(b); valid != want {
			t.Fatalf("valid %v, encoding/json says %v", valid, want)
		}
		if !valid {
			return
		}
		if want := referenceRepeats(b); (dup != nil) != want {
			t.Fatalf("duplicate %v, the map decoder says %v", dup, want)
		}
	})
}

// referenceRepeats walks b with encoding/json's tokenizer, one map of
// names per open object.
func referenceRepeats(b []byte) bool {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber() // a number past float64 is still valid JSON
	type open struct {
		obj   bool
		names map[string]bool
		top   [][]byte
		key   bool
	}
	var stack []*open
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return false
		}
		if err != nil {
			panic(err) // b is valid
		}
		var o *open
		if len(stack) > 0 {
			o = stack[len(stack)-1]
		}
		if name, ok := tok.(string); ok && o != nil && o.obj && o.key {
			if o.names[name] {
				return true
			}
			if len(stack) == 1 {
				for _, n := range o.top {
					if bytes.EqualFold(n, []byte(name)) {
						return true
					}
				}
				o.top = append(o.top, []byte(name))
			}
			o.names[name], o.key = true, false
			continue
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &open{obj: true, names: map[string]bool{}, key: true})
			continue
		case json.Delim('['):
			stack = append(stack, &open{})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		if len(stack) > 0 && stack[len(stack)-1].obj {
			stack[len(stack)-1].key = true
		}
	}
}
