package loadtest

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"
)

func post(t *testing.T, url, body string) (*http.Response, string) {
	t.Helper()
	resp, err := http.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

func TestUpstreamAnswers(t *testing.T) {
	srv := httptest.NewServer(NewUpstream(3, 20*time.Millisecond).Handler())
	defer srv.Close()
	tests := []struct {
		name       string
		body       string
		wantStatus int
		check      func(t *testing.T, body string)
	}{
		{name: "regular call gets a JSON answer with usage", body: `{"model":"bench-model","messages":[]}`, wantStatus: 200,
			check: func(t *testing.T, body string) {
				if gjson.Get(body, "usage.total_tokens").Int() != 26 || gjson.Get(body, "choices.0.message.content").String() == "" {
					t.Errorf("answer %s lacks content or usage", body)
				}
			}},
		{name: "streamed call gets the content chunks, a usage chunk and DONE", body: `{"model":"bench-model","stream":true}`, wantStatus: 200,
			check: func(t *testing.T, body string) {
				var payloads []string
				if err := readSSE(strings.NewReader(body), func(p []byte) { payloads = append(payloads, string(p)) }); err != nil {
					t.Fatal(err)
				}
				if n := strings.Count(body, string(contentMarker)); n != 3 {
					t.Errorf("%d content chunks, want 3", n)
				}
				if last := payloads[len(payloads)-1]; gjson.Get(last, "usage.completion_tokens").Int() != 3 {
					t.Errorf("last payload %s is not the usage chunk", last)
				}
			}},
		{name: "a body that is not JSON is refused", body: `{"model"`, wantStatus: 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := post(t, srv.URL, tt.body)
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.wantStatus, body)
			}
			if tt.check != nil {
				tt.check(t, body)
			}
		})
	}
}

func TestUpstreamPacesOnlyPacedModels(t *testing.T) {
	const chunks, delay = 4, 15 * time.Millisecond
	srv := httptest.NewServer(NewUpstream(chunks, delay).Handler())
	defer srv.Close()
	for _, tt := range []struct {
		model string
		paced bool
	}{{BenchModel, false}, {BenchModel + PacedSuffix, true}} {
		start := time.Now()
		post(t, srv.URL, `{"model":"`+tt.model+`","stream":true}`)
		took := time.Since(start)
		if tt.paced && took < chunks*delay {
			t.Errorf("%s streamed in %v, want at least %v", tt.model, took, chunks*delay)
		}
		if !tt.paced && took >= chunks*delay {
			t.Errorf("%s streamed in %v, want faster than the pacing %v", tt.model, took, chunks*delay)
		}
	}
}

func TestBaselineProxyForwardsBodiesAndStreams(t *testing.T) {
	var got []byte
	fake := NewUpstream(2, 0).Handler()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(got))
		fake.ServeHTTP(w, r)
	}))
	defer up.Close()
	u, _ := url.Parse(up.URL)
	proxy := httptest.NewServer(NewBaselineProxy(u))
	defer proxy.Close()
	const body = `{"model":"bench-model","stream":true}`
	resp, answer := post(t, proxy.URL, body)
	if resp.StatusCode != 200 || string(got) != body {
		t.Fatalf("status %d, upstream saw %q; want 200 and %q", resp.StatusCode, got, body)
	}
	if n := strings.Count(answer, string(contentMarker)); n != 2 || !strings.HasSuffix(answer, "data: [DONE]\n\n") {
		t.Errorf("proxied stream %q, want 2 content chunks ending in DONE", answer)
	}
}

// A paced stream whose client leaves ends its handler at once, not at the
// next chunk's time: an HTTP/2 server closes a connection whose streams
// are reset faster than their handlers end, failing every stream on it.
func TestAPacedStreamsHandlerEndsWhenItsClientLeaves(t *testing.T) {
	ended := make(chan struct{}, 1)
	up := NewUpstream(3, time.Hour).Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		up.ServeHTTP(w, r)
		ended <- struct{}{}
	}))
	defer srv.Close()
	ctx, leave := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, "POST", srv.URL+"/v1/chat/completions",
		strings.NewReader(`{"model":"`+BenchModel+PacedSuffix+`","stream":true}`))
	if err != nil {
		t.Fatal(err)
	}
	// The client leaves while the handler waits for its first chunk, an
	// hour away (the answer's headers go with that chunk).
	time.AfterFunc(50*time.Millisecond, leave)
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
	}
	select {
	case <-ended:
	case <-time.After(time.Minute):
		t.Fatal("the handler of a stream whose client left was still waiting for its next chunk")
	}
}
