package taskhttp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/task"
)

// relayFallback is the status the fake relay answers when the task
// service declines a request.
const relayFallback = http.StatusTeapot

// protoEnv is the task pipeline behind a fake relay that hands
// /v1/responses and /v1/images/* to ServeProtocol and ServeResponse, as
// the real relay does, and answers 418 when they decline.
type protoEnv struct {
	*env
	srv *httptest.Server
}

func newProtoEnv(t *testing.T, plugins ...string) *protoEnv {
	var names []string
	for _, p := range plugins {
		names = append(names, "protocols/"+p)
	}
	pe := &protoEnv{env: newEnv(t, names...)}
	pe.srv = httptest.NewServer(http.HandlerFunc(pe.serve))
	t.Cleanup(pe.srv.Close)
	return pe
}

// withOptions restarts the process with changed options.
func (pe *protoEnv) withOptions(f func(*task.Options)) {
	f(&pe.opts)
	pe.restart()
}

// withHTTPOptions restarts the process with changed handler options.
func (pe *protoEnv) withHTTPOptions(f func(*Options)) {
	f(&pe.httpOpts)
	pe.restart()
}

func (pe *protoEnv) serve(w http.ResponseWriter, r *http.Request) {
	svc := pe.http
	mux := http.NewServeMux()
	svc.Register(mux)
	host := func(protocol string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			raw, _ := io.ReadAll(r.Body)
			body, err := decodeBody(r.Header.Get("Content-Type"), raw)
			if err != nil || !svc.ServeProtocol(w, r, protocol, bodyField(body.Value, "model"), raw) {
				w.WriteHeader(relayFallback)
				_, _ = w.Write([]byte(`{"relay":true}`))
			}
		}
	}
	mux.Handle("POST /v1/responses", host("std_responses"))
	mux.Handle("POST /v1/images/generations", host("openai_image"))
	mux.Handle("POST /v1/images/edits", host("std_image"))
	mux.HandleFunc("GET /v1/responses/{id}", func(w http.ResponseWriter, r *http.Request) {
		if !svc.ServeResponse(w, r, r.PathValue("id")) {
			w.WriteHeader(relayFallback)
			_, _ = w.Write([]byte(`{"relay":true}`))
		}
	})
	mux.ServeHTTP(w, r)
}

// answer is one HTTP answer of the gateway.
type answer struct {
	status int
	header http.Header
	raw    []byte
	json   map[string]any
}

func (pe *protoEnv) call(method, path, key, contentType string, body []byte) answer {
	pe.t.Helper()
	req, _ := http.NewRequest(method, pe.srv.URL+path, bytes.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		pe.t.Fatal(err)
	}
	defer resp.Body.Close()
	a := answer{status: resp.StatusCode, header: resp.Header}
	a.raw, _ = io.ReadAll(resp.Body)
	_ = json.Unmarshal(a.raw, &a.json)
	return a
}

func (pe *protoEnv) post(path, key, body string) answer {
	return pe.call(http.MethodPost, path, key, "application/json", []byte(body))
}

func (pe *protoEnv) get(path, key string) answer {
	return pe.call(http.MethodGet, path, key, "", nil)
}

// protoMultipart builds a multipart form with fields and one file.
func protoMultipart(t *testing.T, fields map[string]string, fileField, filename, content string) (string, []byte) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for k, v := range fields {
		if err := mw.WriteField(k, v); err != nil {
			t.Fatal(err)
		}
	}
	if fileField != "" {
		fw, err := mw.CreateFormFile(fileField, filename)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = fw.Write([]byte(content))
	}
	_ = mw.Close()
	return mw.FormDataContentType(), buf.Bytes()
}

// jobVendor is a fake asynchronous vendor: POST /v1/jobs records the body
// and answers with an id (or submitBody), GET /v1/jobs/{id} answers from a
// script whose last entry repeats, GET /v1/jobs/{id}/{artifact} serves
// content, and /img/{name} serves images for b64_json.
type jobVendor struct {
	t          *testing.T
	srv        *httptest.Server
	mu         sync.Mutex
	submits    []map[string]any
	script     []string
	polls      int
	submitBody string
}

func newJobVendor(t *testing.T, script ...string) *jobVendor {
	v := &jobVendor{t: t, script: script}
	v.srv = httptest.NewServer(http.HandlerFunc(v.serve))
	t.Cleanup(v.srv.Close)
	return v
}

func (v *jobVendor) serve(w http.ResponseWriter, r *http.Request) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if strings.HasPrefix(r.URL.Path, "/img/") {
		if r.URL.Path != "/img/ok.png" {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		_, _ = w.Write([]byte("PNG-BYTES"))
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+vendorKey {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/jobs":
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			v.t.Errorf("vendor got a submit body that is not JSON: %v", err)
		}
		v.submits = append(v.submits, body)
		if v.submitBody != "" {
			_, _ = w.Write([]byte(v.submitBody))
			return
		}
		_, _ = w.Write([]byte(`{"id":"job-` + string(rune('0'+len(v.submits))) + `"}`))
	case len(parts) == 3 && parts[1] == "jobs":
		v.polls++
		_, _ = w.Write([]byte(v.script[min(v.polls-1, len(v.script)-1)]))
	case len(parts) == 4 && parts[1] == "jobs":
		w.Header().Set("Content-Type", "video/mp4")
		_, _ = w.Write([]byte("CONTENT-" + parts[3]))
	default:
		w.WriteHeader(http.StatusNotFound)
	}
}

func (v *jobVendor) setScript(script ...string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.script, v.polls = script, 0
}

func (v *jobVendor) received() []map[string]any {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]map[string]any(nil), v.submits...)
}

// perCall prices models at $0.002 per call: 1,000 quota units.
func (pe *protoEnv) perCall(models ...string) {
	for _, m := range models {
		pe.price(store.ModelPrice{Name: m, PerCall: 0.002})
	}
}

// ledgerKinds counts a user's ledger entries by kind.
func (pe *protoEnv) ledgerKinds(userID int64) map[string]int {
	pe.flush()
	entries, _, err := pe.st.Ledger().List(context.Background(), userID, store.Page{Page: 1, PageSize: 100})
	if err != nil {
		pe.t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, le := range entries {
		kinds[le.Kind]++
	}
	return kinds
}

// waitFor polls cond until it holds or a second has passed.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}
