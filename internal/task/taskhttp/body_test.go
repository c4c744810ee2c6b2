package taskhttp

import (
	"bytes"
	"mime/multipart"
	"testing"
)

func TestDecodeBodyUnion(t *testing.T) {
	var mp bytes.Buffer
	w := multipart.NewWriter(&mp)
	_ = w.WriteField("prompt", "a cat")
	for _, name := range []string{"one.png", "two.png"} {
		fw, _ := w.CreateFormFile("image[]", name)
		_, _ = fw.Write([]byte("data-" + name))
	}
	_ = w.Close()
	tests := []struct {
		name, contentType, body, kind string
	}{
		{"an empty body is none", "application/json", "  ", BodyNone},
		{"json", "application/json; charset=utf-8", `{"a":1}`, BodyJSON},
		{"json without a content type", "", `[1,2]`, BodyJSON},
		{"a form", "application/x-www-form-urlencoded", "a=1&a=2&b=3", BodyForm},
		{"multipart", w.FormDataContentType(), mp.String(), BodyMultipart},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeBody(tt.contentType, []byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			if got.Value["kind"] != tt.kind {
				t.Fatalf("kind = %v, want %s", got.Value["kind"], tt.kind)
			}
		})
	}
	got, _ := decodeBody("application/x-www-form-urlencoded", []byte("a=1&a=2"))
	if vals := got.Value["fields"].(map[string]any)["a"].([]any); len(vals) != 2 || vals[1] != "2" {
		t.Errorf("form fields = %v", got.Value["fields"])
	}
	got, _ = decodeBody(w.FormDataContentType(), mp.Bytes())
	files := got.Value["files"].([]any)
	if len(files) != 2 {
		t.Fatalf("files = %v", files)
	}
	refs := map[string]bool{}
	for _, f := range files {
		refs[f.(map[string]any)["ref"].(string)] = true
	}
	if !refs["request_file:image[]"] || !refs["request_file:image[]#1"] {
		t.Errorf("refs = %v, want request_file:image[] and request_file:image[]#1", refs)
	}
	if f, ok := got.Files.Resolve("request_file:image[]#1"); !ok || string(f.Data) != "data-two.png" {
		t.Errorf("the second file does not resolve to its bytes: %v", f)
	}
	for _, bad := range []struct{ ct, body string }{{"application/json", "{"}, {"application/json", "{} {}"}, {"multipart/form-data", "x"}} {
		if _, err := decodeBody(bad.ct, []byte(bad.body)); err == nil {
			t.Errorf("decodeBody(%q, %q) accepted a broken body", bad.ct, bad.body)
		}
	}
}

func FuzzDecodeBody(f *testing.F) {
	f.Add("application/json", []byte(`{"a":[1,2,{"b":null}]}`))
	f.Add("application/x-www-form-urlencoded", []byte("a=1&b=%zz"))
	f.Add("multipart/form-data; boundary=X", []byte("--X\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n--X--\r\n"))
	f.Add("text/plain", []byte("hello"))
	f.Fuzz(func(t *testing.T, contentType string, body []byte) {
		got, err := decodeBody(contentType, body)
		if err != nil {
			return
		}
		switch got.Value["kind"] {
		case BodyJSON, BodyForm, BodyNone:
		case BodyMultipart:
			for _, f := range got.Value["files"].([]any) {
				if _, ok := got.Files.Resolve(f.(map[string]any)["ref"].(string)); !ok {
					t.Fatalf("a listed file does not resolve")
				}
			}
		default:
			t.Fatalf("unknown kind %v", got.Value["kind"])
		}
	})
}
