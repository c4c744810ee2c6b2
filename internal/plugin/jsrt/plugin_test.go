package jsrt

import (
	"context"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestRepresentativePluginRunsEndToEnd(t *testing.T) {
	src, err := os.ReadFile("testdata/video_vendor.js")
	if err != nil {
		t.Fatal(err)
	}
	prog, err := Compile("video_vendor.js", string(src))
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	wantFns := []string{"buildQueryRequest", "buildSubmitRequest", "native.decodeSubmit", "native.error",
		"native.taskCreated", "native.taskStatus", "parseSubmitResponse", "parseTaskResult",
		"protocols.std_video.decodeRequest", "protocols.std_video.render"}
	if got := prog.Exports().Functions; !reflect.DeepEqual(got, wantFns) {
		t.Fatalf("Functions = %v, want %v", got, wantFns)
	}
	p := NewPool(prog, PoolOptions{Size: 2})
	defer p.Close()
	p.env.now = func() time.Time { return time.Unix(1700000000, 0) }
	p.env.uuid = func() string { return "00000000-0000-4000-8000-000000000000" }
	ctx := context.Background()

	requestBody := map[string]any{"prompt": "a cat", "seconds": 5}
	desc, err := p.Call(ctx, "buildSubmitRequest", map[string]any{
		"requestBody": requestBody, "model": "vv-1", "upstreamModel": "vv-1-pro",
		"baseUrl": "https://api.vendor.test/", "apiKey": "ak|sk",
	})
	if err != nil {
		t.Fatalf("buildSubmitRequest: %v", err)
	}
	d := desc.(map[string]any)
	if !strings.HasPrefix(d["url"].(string), "https://api.vendor.test/v1/videos?sig=") {
		t.Errorf("url = %v", d["url"])
	}
	wantBody := map[string]any{"prompt": "a cat", "seconds": int64(5), "model": "vv-1-pro",
		"request_id": "00000000-0000-4000-8000-000000000000"}
	if !reflect.DeepEqual(d["body"], wantBody) {
		t.Errorf("body = %#v, want %#v", d["body"], wantBody)
	}
	if len(requestBody) != 2 {
		t.Errorf("caller's request body changed: %v", requestBody)
	}
	auth := d["headers"].(map[string]any)["Authorization"].(string)
	if !strings.HasPrefix(auth, "Bearer eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.") {
		t.Errorf("Authorization = %q, want a signed JWT", auth)
	}

	res, err := p.Call(ctx, "parseTaskResult",
		map[string]any{"taskId": "t1", "state": map[string]any{"polls": 2}},
		map[string]any{"data": map[string]any{"status": "running", "progress": "40%"}},
		map[string]any{"status": 200, "headers": map[string][]string{}})
	if err != nil {
		t.Fatalf("parseTaskResult: %v", err)
	}
	want := map[string]any{"status": "IN_PROGRESS", "progress": "40%", "state": map[string]any{"polls": int64(3)}}
	if !reflect.DeepEqual(res, want) {
		t.Errorf("parseTaskResult = %#v, want %#v", res, want)
	}

	dec, err := p.Call(ctx, "protocols.std_video.decodeRequest", map[string]any{
		"model": "vv-1", "body": map[string]any{"kind": "json", "value": map[string]any{"prompt": "a (red) <script>x cat"}},
	})
	if err != nil {
		t.Fatalf("decodeRequest: %v", err)
	}
	if got := dec.(map[string]any)["requestBody"].(map[string]any)["prompt"]; got != "a red cat" {
		t.Errorf("prompt = %q, want %q", got, "a red cat")
	}
}
