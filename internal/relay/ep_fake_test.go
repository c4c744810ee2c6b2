package relay

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// seenRequest is what the fake endpoint upstream received.
type seenRequest struct {
	method, path, query string
	auth, googKey       string
	contentType         string
	contentLength       int64
	raw                 []byte
	fields              map[string]string
	files               map[string][]byte
	filenames           map[string]string
}

func (s seenRequest) json(path string) gjson.Result { return gjson.GetBytes(s.raw, path) }

// fakeEndpoints is an upstream serving the OpenAI-style endpoints and the
// alternate-native batchEmbedContents; it records every request.
type fakeEndpoints struct {
	mu     sync.Mutex
	seen   []seenRequest
	status int // non-zero: answer every call with this error status
	// noUsage leaves usage out of completion and embedding answers.
	noUsage bool
}

func newFakeEndpoints(t *testing.T, f *fakeEndpoints) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := record(t, r)
		f.mu.Lock()
		f.seen = append(f.seen, s)
		status := f.status
		f.mu.Unlock()
		if status != 0 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			fmt.Fprintf(w, `{"error":{"message":"upstream says %d","type":"invalid_request_error","param":"size","code":"bad_size"}}`, status)
			return
		}
		f.answer(w, s)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func record(t *testing.T, r *http.Request) seenRequest {
	s := seenRequest{method: r.Method, path: r.URL.Path, query: r.URL.RawQuery, auth: r.Header.Get("Authorization"),
		googKey: r.Header.Get("x-goog-api-key"), contentType: r.Header.Get("Content-Type"), contentLength: r.ContentLength,
		fields: map[string]string{}, files: map[string][]byte{}, filenames: map[string]string{}}
	mt, params, _ := mime.ParseMediaType(s.contentType)
	if mt != "multipart/form-data" {
		s.raw, _ = io.ReadAll(r.Body)
		return s
	}
	mr := multipart.NewReader(r.Body, params["boundary"])
	for {
		p, err := mr.NextPart()
		if err != nil {
			if err != io.EOF {
				t.Errorf("upstream got a broken multipart body: %v", err)
			}
			return s
		}
		data, _ := io.ReadAll(p)
		if p.FileName() != "" {
			s.files[p.FormName()] = data
			s.filenames[p.FormName()] = p.FileName()
		} else {
			s.fields[p.FormName()] = string(data)
		}
	}
}

func (f *fakeEndpoints) answer(w http.ResponseWriter, s seenRequest) {
	usage := `,"usage":{"prompt_tokens":1000,"completion_tokens":500,"total_tokens":1500}`
	if f.noUsage {
		usage = ""
	}
	switch {
	case s.path == "/v1/completions" && s.json("stream").Bool():
		streamCompletion(w, f.noUsage)
	case s.path == "/v1/completions":
		writeJSONString(w, `{"id":"cmpl-1","object":"text_completion","model":"`+s.json("model").String()+`","choices":[{"index":0,"text":"once upon a time","finish_reason":"stop"}]`+usage+`}`)
	case s.path == "/v1/embeddings":
		n := len(s.json("input").Array())
		if s.json("input").Type == gjson.String {
			n = 1
		}
		var data []string
		for i := n - 1; i >= 0; i-- { // out of order: the gateway must sort by index
			data = append(data, fmt.Sprintf(`{"object":"embedding","index":%d,"embedding":[%d.5,-0.25]}`, i, i))
		}
		writeJSONString(w, `{"object":"list","data":[`+strings.Join(data, ",")+`],"model":"x"`+strings.Replace(usage, `"completion_tokens":500,`, "", 1)+`}`)
	case strings.HasSuffix(s.path, ":batchEmbedContents"):
		var vecs []string
		for i := range s.json("requests").Array() {
			vecs = append(vecs, fmt.Sprintf(`{"values":[%d.5,-0.25]}`, i))
		}
		writeJSONString(w, `{"embeddings":[`+strings.Join(vecs, ",")+`]}`)
	case strings.HasSuffix(s.path, ":embedContent"):
		writeJSONString(w, `{"embedding":{"values":[0.5,-0.25]}}`)
	case strings.HasPrefix(s.path, "/v1/images/") && (s.json("stream").Bool() || s.fields["stream"] == "true"):
		streamImage(w, strings.TrimSuffix(strings.TrimPrefix(s.path, "/v1/images/"), "s"))
	case strings.HasPrefix(s.path, "/v1/images/"):
		answerImages(w, s)
	case s.path == "/v1/audio/transcriptions" && s.fields["stream"] == "true":
		streamTranscript(w)
	case s.path == "/v1/audio/transcriptions" || s.path == "/v1/audio/translations":
		answerTranscript(w, s.fields["response_format"])
	case s.path == "/v1/audio/speech":
		streamAudio(w)
	case strings.Contains(s.path, "rerank"):
		writeJSONString(w, `{"results":[{"index":1,"relevance_score":0.9},{"index":0,"relevance_score":0.1}],"usage":{"total_tokens":1000}}`)
	case s.path == "/v1/moderations":
		writeJSONString(w, `{"id":"modr-1","model":"`+s.json("model").String()+`","results":[{"flagged":false}]}`)
	case s.path == "/v1/alpha/search":
		writeJSONString(w, `{"results":[{"title":"Go","url":"https://go.dev"}]}`)
	default:
		http.Error(w, "no such path "+s.path, http.StatusNotFound)
	}
}

func writeJSONString(w http.ResponseWriter, body string) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, body)
}

func streamCompletion(w http.ResponseWriter, noUsage bool) {
	w.Header().Set("Content-Type", "text/event-stream")
	fl := w.(http.Flusher)
	for _, word := range []string{"once ", "upon ", "a time"} {
		fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"text_completion\",\"choices\":[{\"index\":0,\"text\":%q,\"finish_reason\":null}]}\n\n", word)
		fl.Flush()
	}
	if !noUsage {
		fmt.Fprint(w, "data: {\"id\":\"c\",\"object\":\"text_completion\",\"choices\":[],\"usage\":{\"prompt_tokens\":1000,\"completion_tokens\":500,\"total_tokens\":1500}}\n\n")
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
}

func answerImages(w http.ResponseWriter, s seenRequest) {
	n := int(s.json("n").Int())
	if v, ok := s.fields["n"]; ok {
		fmt.Sscan(v, &n)
	}
	n = max(n, 1)
	items := make([]string, n)
	for i := range items {
		items[i] = fmt.Sprintf(`{"url":"https://img.example/%d.png"}`, i)
	}
	writeJSONString(w, `{"created":1,"data":[`+strings.Join(items, ",")+`]}`)
}

func answerTranscript(w http.ResponseWriter, format string) {
	switch format {
	case "text":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "hello world\n")
	case "srt":
		w.Header().Set("Content-Type", "application/x-subrip")
		io.WriteString(w, "1\n00:00:00,000 --> 00:00:01,000\nhello world\n")
	case "vtt":
		w.Header().Set("Content-Type", "text/vtt")
		io.WriteString(w, "WEBVTT\n\n00:00.000 --> 00:01.000\nhello world\n")
	case "verbose_json":
		writeJSONString(w, `{"task":"transcribe","language":"english","duration":90.5,"text":"hello world","segments":[]}`)
	default:
		writeJSONString(w, `{"text":"hello world"}`)
	}
}

// streamImage answers a streamed image call as the images API does: a
// partial image, then the completed image with the call's token usage.
// kind is "generation" or "edit".
func streamImage(w http.ResponseWriter, kind string) {
	w.Header().Set("Content-Type", "text/event-stream")
	fl := w.(http.Flusher)
	fmt.Fprintf(w, "event: image_%[1]s.partial_image\ndata: {\"type\":\"image_%[1]s.partial_image\",\"b64_json\":\"cGFydA==\",\"partial_image_index\":0}\n\n", kind)
	fl.Flush()
	fmt.Fprintf(w, "event: image_%[1]s.completed\ndata: {\"type\":\"image_%[1]s.completed\",\"b64_json\":\"ZnVsbA==\",\"usage\":{\"input_tokens\":100000,\"output_tokens\":200000,\"total_tokens\":300000,\"input_tokens_details\":{\"text_tokens\":100000,\"image_tokens\":0}}}\n\n", kind)
	fl.Flush()
}

// streamTranscript answers a streamed transcription: deltas, then the
// whole text with the call's token usage.
func streamTranscript(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	fl := w.(http.Flusher)
	for _, d := range []string{"hello ", "world"} {
		fmt.Fprintf(w, "data: {\"type\":\"transcript.text.delta\",\"delta\":%q}\n\n", d)
		fl.Flush()
	}
	fmt.Fprint(w, "data: {\"type\":\"transcript.text.done\",\"text\":\"hello world\",\"usage\":{\"type\":\"tokens\",\"input_tokens\":100000,\"output_tokens\":50000,\"total_tokens\":150000}}\n\n")
	fl.Flush()
}

// speechAudio is the fake's audio; sent in several flushed chunks.
var speechAudio = strings.Repeat("ID3-audio-bytes-", 5000)

func streamAudio(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "audio/mpeg")
	fl := w.(http.Flusher)
	for i := 0; i < len(speechAudio); i += 20000 {
		io.WriteString(w, speechAudio[i:min(i+20000, len(speechAudio))])
		fl.Flush()
	}
}

func (f *fakeEndpoints) last(t *testing.T) seenRequest {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.seen) == 0 {
		t.Fatal("the upstream received nothing")
	}
	return f.seen[len(f.seen)-1]
}

func (f *fakeEndpoints) calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.seen)
}

// lastConsume returns the newest consume row and its other JSON.
func (e *env) lastConsume() (store.UsageLog, map[string]any) {
	e.t.Helper()
	e.flush()
	logs, _, err := e.st.Logs().List(context.Background(), store.LogFilter{Type: store.LogConsume}, store.Page{})
	if err != nil || len(logs) == 0 {
		e.t.Fatalf("no consume row: %v", err)
	}
	var other map[string]any
	_ = json.Unmarshal(logs[0].Other, &other)
	return logs[0], other
}

// postWith sends a body with its own content type.
func (e *env) postWith(path, contentType string, body io.Reader) *http.Response {
	e.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+path, body)
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Authorization", "Bearer "+testKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	return resp
}

// readAll returns the body as a string and closes it.
func readAll(resp *http.Response) string {
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}
