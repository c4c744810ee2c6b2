package taskhttp

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"strings"
	"sync"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/task"
	"github.com/turnpike-gw/turnpike/internal/task/egress"
)

// filerVendor is the fake upstream of testdata/files/filer.js. It records
// every submit exactly as received.
type filerVendor struct {
	t   *testing.T
	srv *httptest.Server
	mu  sync.Mutex
	// submits are the raw submit requests.
	submits []recorded
	// sse, when set, answers submits as an event stream written by it.
	sse func(w http.ResponseWriter)
	// content serves GET /content/... (with the channel key).
	content http.HandlerFunc
	// public serves /public/... without any key, like a CDN.
	public http.HandlerFunc
	// job, when set, is the answer to every poll.
	job string
}

type recorded struct {
	header        http.Header
	body          []byte
	contentLength int64
	chunked       bool
}

func newFilerVendor(t *testing.T) *filerVendor {
	v := &filerVendor{t: t}
	v.srv = httptest.NewServer(http.HandlerFunc(v.serve))
	t.Cleanup(v.srv.Close)
	return v
}

func (v *filerVendor) serve(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/public/") && v.public != nil {
		v.public(w, r)
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+vendorKey {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	switch {
	case r.URL.Path == "/submit":
		body, _ := io.ReadAll(r.Body)
		v.mu.Lock()
		v.submits = append(v.submits, recorded{header: r.Header.Clone(), body: body, contentLength: r.ContentLength,
			chunked: len(r.TransferEncoding) > 0})
		sse := v.sse
		v.mu.Unlock()
		if sse != nil {
			w.Header().Set("Content-Type", "text/event-stream")
			sse(w)
			return
		}
		_, _ = w.Write([]byte(`{"id":"job-1"}`))
	case strings.HasPrefix(r.URL.Path, "/jobs/") && v.job != "":
		_, _ = w.Write([]byte(v.job))
	case strings.HasPrefix(r.URL.Path, "/jobs/"):
		_, _ = w.Write([]byte(`{"status":"done","url":"https://cdn.filer.test/v.mp4"}`))
	case strings.HasPrefix(r.URL.Path, "/content/") && v.content != nil:
		v.content(w, r)
	default:
		w.WriteHeader(http.StatusNotFound)
	}
}

func (v *filerVendor) last() recorded {
	v.mu.Lock()
	defer v.mu.Unlock()
	if len(v.submits) == 0 {
		v.t.Fatal("the vendor received no submit")
	}
	return v.submits[len(v.submits)-1]
}

func (v *filerVendor) count() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return len(v.submits)
}

// newFilerEnv is a task pipeline with the filer plugin on one channel.
func newFilerEnv(t *testing.T, mod func(*task.Options)) (*env, *filerVendor) {
	t.Helper()
	e := newEnv(t, "files/filer.js")
	if mod != nil {
		e.close()
		mod(&e.opts)
		e.open()
	}
	e.price(store.ModelPrice{Name: "filer-v1", PerCall: 0.001})
	v := newFilerVendor(t)
	e.channel("filer-main", "filer", v.srv.URL, []string{"filer-v1"}, nil)
	return e, v
}

// upload is one file of a multipart test request.
type upload struct {
	field, name, mime string
	data              []byte
}

// multipartRequest encodes fields (spec is JSON-encoded) and uploads.
func multipartRequest(t *testing.T, fields map[string]any, files ...upload) (string, string) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for k, v := range fields {
		s, ok := v.(string)
		if !ok {
			b, _ := json.Marshal(v)
			s = string(b)
		}
		_ = w.WriteField(k, s)
	}
	for _, f := range files {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", `form-data; name="`+f.field+`"; filename="`+f.name+`"`)
		h.Set("Content-Type", f.mime)
		pw, _ := w.CreatePart(h)
		_, _ = pw.Write(f.data)
	}
	_ = w.Close()
	return w.FormDataContentType(), buf.String()
}

func testFiles() []upload {
	return []upload{
		{"image", "a.png", "image/png", []byte("PNG-one")},
		{"image", "b.png", "image/png", []byte("PNG-two")},
		{"mask", "m.webp", "image/webp", []byte("MASK")},
	}
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func TestUploadedFilesGetOneRefEachAndPluginsSeeOnlyReferences(t *testing.T) {
	e, v := newFilerEnv(t, nil)
	ct, body := multipartRequest(t, map[string]any{"model": "filer-v1", "mode": "json", "spec": map[string]any{"n": 1}}, testFiles()...)
	code, out := e.do(http.MethodPost, "/filer/v1/jobs", userKey, ct, body)
	if code != 200 {
		t.Fatalf("submit: %d %v", code, out)
	}
	var files []egress.FileReference
	if err := json.Unmarshal([]byte(v.last().header.Get("X-Files")), &files); err != nil {
		t.Fatal(err)
	}
	want := []egress.FileReference{
		{Ref: "request_file:image", Field: "image", Filename: "a.png", MimeType: "image/png", Size: 7},
		{Ref: "request_file:image#1", Field: "image", Filename: "b.png", MimeType: "image/png", Size: 7},
		{Ref: "request_file:mask", Field: "mask", Filename: "m.webp", MimeType: "image/webp", Size: 4},
	}
	if len(files) != len(want) {
		t.Fatalf("ctx.files = %+v", files)
	}
	for i := range want {
		if files[i] != want[i] {
			t.Errorf("ctx.files[%d] = %+v, want %+v", i, files[i], want[i])
		}
	}
}

func TestPlaceholdersInTheJSONBodyReachTheVendorEncoded(t *testing.T) {
	spec := map[string]any{
		"image": map[string]any{"__fileRef": "request_file:image", "encoding": "base64"},
		"input": map[string]any{"frames": []any{
			map[string]any{"url": map[string]any{"__fileRef": "request_file:image#1", "encoding": "dataUrl"}},
			map[string]any{"url": map[string]any{"__fileRef": "request_file:mask", "encoding": "dataUrl", "mimeType": "image/x-mask"}},
		}},
		"keep": "plain",
	}
	e, v := newFilerEnv(t, nil)
	ct, body := multipartRequest(t, map[string]any{"model": "filer-v1", "mode": "json", "spec": spec}, testFiles()...)
	if code, out := e.do(http.MethodPost, "/filer/v1/jobs", userKey, ct, body); code != 200 {
		t.Fatalf("submit: %d %v", code, out)
	}
	var got map[string]any
	if err := json.Unmarshal(v.last().body, &got); err != nil {
		t.Fatal(err)
	}
	frames := got["input"].(map[string]any)["frames"].([]any)
	checks := map[string]any{
		"top-level base64":           got["image"],
		"dataUrl with the file mime": frames[0].(map[string]any)["url"],
		"dataUrl with its own mime":  frames[1].(map[string]any)["url"],
		"untouched value":            got["keep"],
	}
	wants := map[string]string{
		"top-level base64":           b64("PNG-one"),
		"dataUrl with the file mime": "data:image/png;base64," + b64("PNG-two"),
		"dataUrl with its own mime":  "data:image/x-mask;base64," + b64("MASK"),
		"untouched value":            "plain",
	}
	for name, w := range wants {
		if checks[name] != w {
			t.Errorf("%s = %v, want %v", name, checks[name], w)
		}
	}
}

func TestFileRefusalsAre400sNamingTheRef(t *testing.T) {
	tests := []struct {
		name     string
		maxFile  int64
		spec     any
		wantText string
	}{
		{"an unknown ref", 0, map[string]any{"x": map[string]any{"__fileRef": "request_file:nope", "encoding": "base64"}}, "request_file:nope"},
		{"a placeholder's maxBytes", 0, map[string]any{"x": map[string]any{"__fileRef": "request_file:image", "encoding": "base64", "maxBytes": 3}}, "request_file:image is 7 bytes, more than its maxBytes 3"},
		{"the per-file cap", 5, map[string]any{"x": map[string]any{"__fileRef": "request_file:image", "encoding": "base64"}}, "request_file:image is 7 bytes, more than the 5 bytes allowed per file"},
		{"the total cap", 10, []any{
			map[string]any{"__fileRef": "request_file:image", "encoding": "base64"},
			map[string]any{"__fileRef": "request_file:image#1", "encoding": "base64"},
		}, "request_file:image#1 brings the files of this request to 14 bytes"},
		{"a bad encoding", 0, map[string]any{"x": map[string]any{"__fileRef": "request_file:image", "encoding": "hex"}}, "body.x.encoding must be"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, v := newFilerEnv(t, func(o *task.Options) { o.MaxFileBytes = tt.maxFile })
			ct, body := multipartRequest(t, map[string]any{"model": "filer-v1", "mode": "json", "spec": tt.spec}, testFiles()...)
			code, out := e.do(http.MethodPost, "/filer/v1/jobs", userKey, ct, body)
			msg, _ := json.Marshal(out)
			if code != 400 || !strings.Contains(string(msg), tt.wantText) {
				t.Errorf("got %d %s, want 400 mentioning %q", code, msg, tt.wantText)
			}
			if v.count() != 0 {
				t.Errorf("the vendor received %d submits, want none", v.count())
			}
			if got := e.quota(e.alice); got != 1_000_000 {
				t.Errorf("quota = %d, want the reservation refunded", got)
			}
		})
	}
}

func TestMultipartPartsStreamFilesByteForByte(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcdef"), 3<<16) // 3 MiB: spooled, not held
	big[12345] = 0
	e, v := newFilerEnv(t, nil)
	parts := []any{
		map[string]any{"name": "prompt", "value": "a cat"},
		map[string]any{"name": "video", "fileRef": "request_file:clip", "filename": "renamed.mp4"},
		map[string]any{"name": "image", "fileRef": "request_file:image#1"},
		map[string]any{"name": "meta", "value": map[string]any{"k": 1}},
	}
	files := append(testFiles(), upload{"clip", "clip.mp4", "video/mp4", big})
	ct, body := multipartRequest(t, map[string]any{"model": "filer-v1", "mode": "multipart", "spec": parts}, files...)
	if code, out := e.do(http.MethodPost, "/filer/v1/jobs", userKey, ct, body); code != 200 {
		t.Fatalf("submit: %d %v", code, out)
	}
	rec := v.last()
	if rec.chunked || rec.contentLength != int64(len(rec.body)) {
		t.Errorf("content length %d (chunked %v) for a %d-byte body, want an exact length", rec.contentLength, rec.chunked, len(rec.body))
	}
	_, params, err := mime.ParseMediaType(rec.header.Get("Content-Type"))
	if err != nil {
		t.Fatal(err)
	}
	type part struct{ name, filename, mime, data string }
	var got []part
	mr := multipart.NewReader(bytes.NewReader(rec.body), params["boundary"])
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(p)
		got = append(got, part{p.FormName(), p.FileName(), p.Header.Get("Content-Type"), string(data)})
	}
	want := []part{
		{"prompt", "", "", "a cat"},
		{"video", "renamed.mp4", "video/mp4", string(big)},
		{"image", "b.png", "image/png", "PNG-two"},
		{"meta", "", "", `{"k":1}`},
	}
	if len(got) != len(want) {
		t.Fatalf("%d parts, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].name != want[i].name || got[i].filename != want[i].filename || (want[i].mime != "" && got[i].mime != want[i].mime) || got[i].data != want[i].data {
			t.Errorf("part %d = %s/%s/%s (%d bytes), want %s/%s/%s (%d bytes)", i, got[i].name, got[i].filename, got[i].mime,
				len(got[i].data), want[i].name, want[i].filename, want[i].mime, len(want[i].data))
		}
	}
}

func TestMultipartPartWithAnUnknownRefIsRefusedBeforeSending(t *testing.T) {
	e, v := newFilerEnv(t, nil)
	parts := []any{map[string]any{"name": "video", "fileRef": "request_file:video#3"}}
	ct, body := multipartRequest(t, map[string]any{"model": "filer-v1", "mode": "multipart", "spec": parts}, testFiles()...)
	code, out := e.do(http.MethodPost, "/filer/v1/jobs", userKey, ct, body)
	msg, _ := json.Marshal(out)
	if code != 400 || !strings.Contains(string(msg), "request_file:video#3") || v.count() != 0 {
		t.Errorf("got %d %s with %d submits, want a 400 naming the ref and nothing sent", code, msg, v.count())
	}
}
