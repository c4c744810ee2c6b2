package app_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/archive/s3fake"
	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/relay"
	"github.com/turnpike-gw/turnpike/internal/testkit"
)

const (
	contentRoot    = "content-root-token-0123"
	contentChanKey = "chan-secret-key-0123456789"
	contentGitHub  = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
	contentOpenAI  = "sk-proj-AbCdEfGhIjKlMnOpQrStUvWx0123"
)

// contentUpstream answers chat completions (regular: echoing the channel's
// key and an AWS key; streamed: an OpenAI key split across two chunks) and
// Responses calls.
func contentUpstream(t *testing.T) *httptest.Server {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body struct {
			Stream bool `json:"stream"`
		}
		_ = json.Unmarshal(raw, &body)
		switch {
		case r.URL.Path == "/v1/responses":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"id":"resp_1","object":"response","status":"completed","model":"m","output":[{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"responses answer AKIAABCDEFGHIJKLMNOP","annotations":[]}]}],"usage":{"input_tokens":3,"output_tokens":4,"total_tokens":7}}`)
		case body.Stream:
			w.Header().Set("Content-Type", "text/event-stream")
			for _, piece := range []string{"key: " + contentOpenAI[:14], contentOpenAI[14:] + " end"} {
				fmt.Fprintf(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%q}}]}\n\n", piece)
				w.(http.Flusher).Flush()
			}
			fmt.Fprint(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":5,\"total_tokens\":8}}\n\ndata: [DONE]\n\n")
		default:
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"id":"c1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"your key `+contentChanKey+` and AKIAABCDEFGHIJKLMNOP"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":5,"total_tokens":8}}`)
		}
	}))
	t.Cleanup(up.Close)
	return up
}

func contentGateway(t *testing.T, opts ...testkit.Option) *testkit.Gateway {
	weight := 1
	up := contentUpstream(t)
	pw := func(n string) string { return n + "-password" }
	base := []testkit.Option{testkit.WithRootToken(contentRoot),
		testkit.WithGroups(map[string]float64{"audited": 1}),
		testkit.WithUsers(
			config.SeedUser{Username: "ann", Password: pw("ann"), Role: "user", Group: "audited", Quota: 10_000_000},
			config.SeedUser{Username: "bob", Password: pw("bob"), Role: "user", Group: "audited", Quota: 10_000_000},
			config.SeedUser{Username: "ada", Password: pw("ada"), Role: "admin", Group: "default", Quota: 10_000_000}),
		testkit.WithTokens(config.SeedToken{Name: "k", User: "ann", Key: "sk-content-ann-key"},
			config.SeedToken{Name: "quiet", User: "ann", Key: "sk-content-ann-quiet", LogContent: map[string]any{"enabled": false}}),
		testkit.WithChannels(config.SeedChannel{Name: "c", Type: "openai", BaseURL: up.URL, Key: contentChanKey, Models: []string{"m"},
			Groups: []string{"audited", "default"}, Weight: &weight}),
		testkit.WithModels(map[string]config.SeedPrice{"m": {InputPerMTok: 1, OutputPerMTok: 1}})}
	g := testkit.Start(t, append(base, opts...)...)
	st, body := g.Do(t, "PUT", "/api/groups/audited", contentRoot, map[string]any{"ratio": 1, "log_content": map[string]any{"enabled": true, "max_kb": 64}})
	if st != 200 || body["log_content"] == nil {
		t.Fatalf("turning content logging on for the group: %d %v", st, body)
	}
	return g
}

// newestRow is the newest usage row: its id and other.
func newestRow(t *testing.T, g *testkit.Gateway) (int64, map[string]any) {
	t.Helper()
	_, body := g.Do(t, "GET", "/api/logs?page_size=1", contentRoot, nil)
	items, _ := body["items"].([]any)
	if len(items) == 0 {
		t.Fatalf("no usage row: %v", body)
	}
	row := items[0].(map[string]any)
	other, _ := row["other"].(map[string]any)
	return int64(row["id"].(float64)), other
}

func contentOf(t *testing.T, g *testkit.Gateway, id int64, cookie *http.Cookie, bearer string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest("GET", fmt.Sprintf("%s/api/logs/%d/content", g.URL, id), nil)
	if cookie != nil {
		req.AddCookie(cookie)
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

func TestContentLoggingKeepsEachSurfacesRequestAndAnswerRedacted(t *testing.T) {
	g := contentGateway(t)
	ask := "my token is " + contentGitHub
	for _, tc := range []struct {
		name, path  string
		body        map[string]any
		wantRequest string
		wantAnswer  string
	}{
		{"chat", "/v1/chat/completions", map[string]any{"model": "m", "messages": []any{map[string]any{"role": "user", "content": ask}}},
			"my token is [redacted]", "your key [redacted] and [redacted]"},
		{"chat streamed, a key split across chunks", "/v1/chat/completions", map[string]any{"model": "m", "stream": true,
			"messages": []any{map[string]any{"role": "user", "content": ask}}}, "my token is [redacted]", "key: [redacted] end"},
		{"messages streamed", "/v1/messages", map[string]any{"model": "m", "max_tokens": 64, "stream": true,
			"messages": []any{map[string]any{"role": "user", "content": ask}}}, "my token is [redacted]", "key: [redacted] end"},
		{"responses", "/v1/responses", map[string]any{"model": "m", "input": ask}, "my token is [redacted]", "responses answer [redacted]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, raw := g.DoSurface(t, testkit.SurfaceCall{Name: tc.name, Path: tc.path, Body: tc.body,
				Header: map[string]string{"anthropic-version": "2023-06-01"}}, "sk-content-ann-key")
			if st != 200 {
				t.Fatalf("call: %d %s", st, raw)
			}
			id, other := newestRow(t, g)
			if other["content"] == nil {
				t.Fatalf("the row names no content: %v", other)
			}
			st, body := contentOf(t, g, id, nil, contentRoot)
			if st != 200 {
				t.Fatalf("content: %d %v", st, body)
			}
			req, ans := body["request"].(string), body["answer"].(string)
			if !strings.Contains(req, tc.wantRequest) || strings.Contains(req, contentGitHub) {
				t.Errorf("request %q, want it to hold %q", req, tc.wantRequest)
			}
			if !strings.Contains(ans, tc.wantAnswer) || strings.Contains(ans, contentChanKey) || strings.Contains(ans, contentOpenAI[14:]) {
				t.Errorf("answer %q, want it to hold %q", ans, tc.wantAnswer)
			}
			if body["request_truncated"] != false || body["answer_truncated"] != false {
				t.Errorf("marked truncated: %v", body)
			}
		})
	}
}

func TestContentIsAnsweredToItsOwnerAndAdministratorsOnly(t *testing.T) {
	g := contentGateway(t)
	if st, raw := g.DoSurface(t, testkit.SurfaceCall{Name: "chat", Path: "/v1/chat/completions",
		Body: map[string]any{"model": "m", "messages": []any{map[string]any{"role": "user", "content": "hi"}}}}, "sk-content-ann-key"); st != 200 {
		t.Fatalf("call: %d %s", st, raw)
	}
	id, _ := newestRow(t, g)
	for _, tc := range []struct {
		who  string
		want int
	}{{"ann", 200}, {"ada", 200}, {"bob", 404}} {
		st, body := contentOf(t, g, id, g.Login(t, tc.who, tc.who+"-password"), "")
		if st != tc.want {
			t.Errorf("%s: %d %v, want %d", tc.who, st, body, tc.want)
		}
		if st == 404 {
			if e, _ := body["error"].(map[string]any); e["code"] != "not_found" {
				t.Errorf("%s: a 404 outside the console API's error envelope: %v", tc.who, body)
			}
		}
	}
	if st, _ := contentOf(t, g, id+1000, nil, contentRoot); st != 404 {
		t.Errorf("a missing row: %d", st)
	}
}

func TestAKeyThatTurnsContentLoggingOffKeepsNothing(t *testing.T) {
	g := contentGateway(t)
	if st, raw := g.DoSurface(t, testkit.SurfaceCall{Name: "chat", Path: "/v1/chat/completions",
		Body: map[string]any{"model": "m", "messages": []any{map[string]any{"role": "user", "content": "hi"}}}}, "sk-content-ann-quiet"); st != 200 {
		t.Fatalf("call: %d %s", st, raw)
	}
	id, other := newestRow(t, g)
	if other["content"] != nil {
		t.Fatalf("a row of a key with logging off names content: %v", other)
	}
	if st, _ := contentOf(t, g, id, nil, contentRoot); st != 404 {
		t.Errorf("content of a row without it: %d", st)
	}
}

func TestWithTheArchiveBucketContentsAreObjectsThere(t *testing.T) {
	fake, url := s3fake.New(t)
	g := contentGateway(t, testkit.WithConfig(func(c *config.Config) {
		c.Logs.Archive.S3 = config.S3Bucket{Endpoint: url, Bucket: fake.Bucket, Prefix: "gw", AccessKeyID: fake.Access, SecretAccessKey: "s"}
	}))
	if st, raw := g.DoSurface(t, testkit.SurfaceCall{Name: "chat", Path: "/v1/chat/completions",
		Body: map[string]any{"model": "m", "messages": []any{map[string]any{"role": "user", "content": "hello bucket"}}}}, "sk-content-ann-key"); st != 200 {
		t.Fatalf("call: %d %s", st, raw)
	}
	id, other := newestRow(t, g)
	st, body := contentOf(t, g, id, nil, contentRoot)
	if st != 200 || !strings.Contains(body["request"].(string), "hello bucket") {
		t.Fatalf("content: %d %v", st, body)
	}
	ref := other["content"].(string)
	if _, ok := fake.Get("gw/content/" + ref[:4] + "/" + ref[4:6] + "/" + ref[6:8] + "/" + ref + ".json.gz"); !ok {
		t.Errorf("no object for %s; the bucket holds %v", ref, fake.Keys())
	}
}

// A response-cache hit reaches no upstream: its content is the client's own
// request and the replayed answer, redacted like any other.
func TestAResponseCacheHitKeepsItsRequestAndReplayedAnswer(t *testing.T) {
	g := contentGateway(t, testkit.WithModels(map[string]config.SeedPrice{"m": {InputPerMTok: 1, OutputPerMTok: 1,
		ResponseCache: map[string]any{"ttl_seconds": 300, "hit_ratio": 0.1}}}))
	for _, stream := range []bool{false, true} {
		body := map[string]any{"model": "m", "stream": stream, "messages": []any{map[string]any{"role": "user", "content": fmt.Sprintf("cached %v %s", stream, contentGitHub)}}}
		if st, raw := g.DoSurface(t, testkit.SurfaceCall{Name: "chat", Path: "/v1/chat/completions", Body: body}, "sk-content-ann-key"); st != 200 {
			t.Fatalf("first call (stream %v): %d %s", stream, st, raw)
		}
		callUntilCacheHit(t, g, body, "sk-content-ann-key")
		id, other := newestRow(t, g)
		if other["response_cache"] != "hit" || other["content"] == nil {
			t.Fatalf("stream %v: the second call's row %v, want a hit naming its content", stream, other)
		}
		st, got := contentOf(t, g, id, nil, contentRoot)
		if st != 200 {
			t.Fatalf("stream %v: content %d %v", stream, st, got)
		}
		req, ans := got["request"].(string), got["answer"].(string)
		if !strings.Contains(req, fmt.Sprintf("cached %v [redacted]", stream)) || strings.Contains(req, contentGitHub) {
			t.Errorf("stream %v: request %q", stream, req)
		}
		want := "your key [redacted]"
		if stream {
			want = "key: [redacted] end"
		}
		if !strings.Contains(ans, want) || strings.Contains(ans, contentChanKey) {
			t.Errorf("stream %v: answer %q, want it to hold %q", stream, ans, want)
		}
	}
}

// callUntilCacheHit repeats the chat call body until the response cache
// answers it: the cache keeps an answer off the request's path, so the
// call right after the first can still miss on a slow machine.
func callUntilCacheHit(t *testing.T, g *testkit.Gateway, body map[string]any, key string) {
	t.Helper()
	for range 200 {
		resp := g.DoRaw(t, "POST", "/v1/chat/completions", key, body)
		raw, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("call: %d %s %v", resp.StatusCode, raw, err)
		}
		if resp.Header.Get(relay.CacheHeader) == "hit" {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the response cache never answered the repeated call")
}
