package egress

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func placeholderFiles() Files {
	return Files{
		"request_file:a": {FileReference: FileReference{Ref: "request_file:a", MimeType: "image/png", Size: 3}, Data: []byte("abc")},
		"request_file:b": {FileReference: FileReference{Ref: "request_file:b", Size: 2}, Data: []byte("xy")},
	}
}

func TestInlineFilesLeavesItsInputUntouched(t *testing.T) {
	in := map[string]any{"deep": []any{map[string]any{"f": map[string]any{"__fileRef": "request_file:b", "encoding": "dataUrl"}}}, "n": int64(1)}
	before, _ := json.Marshal(in)
	out, err := inlineFiles(in, NewBudget(placeholderFiles(), 0))
	if err != nil {
		t.Fatal(err)
	}
	after, _ := json.Marshal(in)
	got, _ := json.Marshal(out)
	if !bytes.Equal(before, after) {
		t.Errorf("the input changed: %s → %s", before, after)
	}
	if want := `{"deep":[{"f":"data:application/octet-stream;base64,eHk="}],"n":1}`; string(got) != want {
		t.Errorf("out = %s, want %s", got, want)
	}
}

func TestInlineFilesRefusesHostileNesting(t *testing.T) {
	var v any = "leaf"
	for range maxPlaceholderDepth + 5 {
		v = []any{v}
	}
	if _, err := inlineFiles(v, NewBudget(nil, 0)); err == nil || !strings.Contains(err.Error(), "nested more than") {
		t.Errorf("err = %v, want a nesting refusal", err)
	}
}

// FuzzPlaceholderWalker feeds arbitrary JSON bodies through the walker: it
// never panics, an accepted body holds no placeholder, and the budget never
// admits more than its total.
func FuzzPlaceholderWalker(f *testing.F) {
	f.Add([]byte(`{"a":{"__fileRef":"request_file:a","encoding":"base64"}}`), int64(0))
	f.Add([]byte(`[{"__fileRef":"request_file:b","encoding":"dataUrl","mimeType":"x/y","maxBytes":1}]`), int64(4))
	f.Add([]byte(`{"x":[[{"__fileRef":"request_file:a","encoding":"dataUrl"}],{"__fileRef":"request_file:a","encoding":"base64"}]}`), int64(5))
	f.Add([]byte(`{"__fileRef":7}`), int64(0))
	f.Fuzz(func(t *testing.T, raw []byte, max int64) {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber() // as the host decodes bodies
		var body any
		err := dec.Decode(&body)
		if err != nil {
			return
		}
		b := NewBudget(placeholderFiles(), max)
		out, err := inlineFiles(body, b)
		if b.used > b.total {
			t.Fatalf("used %d of %d", b.used, b.total)
		}
		if err != nil {
			return
		}
		enc, err := json.Marshal(out)
		if err != nil {
			t.Fatalf("the result is not JSON: %v", err)
		}
		if bytes.Contains(enc, []byte(`"__fileRef":`)) && !bytes.Contains(raw, []byte(`\"__fileRef\"`)) {
			t.Fatalf("a placeholder survived: %s", enc)
		}
	})
}
