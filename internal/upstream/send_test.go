package upstream

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
)

// sendOutcome is what a caller of Do can observe of one request.
type sendOutcome struct {
	status     int // 0: no response
	body       string
	err        string
	op, url    string
	refused    bool
	targetHits int64
}

func observe(resp *http.Response, err error, hits int64) sendOutcome {
	o := sendOutcome{targetHits: hits}
	if resp != nil {
		o.status = resp.StatusCode
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			o.body = string(b)
		}
	}
	if err != nil {
		o.err = err.Error()
		o.refused = errors.Is(err, ErrRedirectRefused)
		var ue *url.Error
		if errors.As(err, &ue) {
			o.op, o.url = ue.Op, ue.URL
		}
	}
	return o
}

// redirectingUpstream answers by path: /ok with 200, /NNN with a redirect of
// that status to /target (which counts what reaches it), /302-none without
// a Location, /302-bad with one that does not parse.
func redirectingUpstream(t *testing.T, hits *atomic.Int64) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch p := r.URL.Path; p {
		case "/ok":
			_, _ = io.WriteString(w, "fine; authorization "+r.Header.Get("Authorization"))
		case "/target":
			hits.Add(1)
			_, _ = io.WriteString(w, "followed")
		case "/302-none":
			w.WriteHeader(http.StatusFound)
		case "/302-bad":
			w.Header().Set("Location", "http://[::1")
			w.WriteHeader(http.StatusFound)
		default:
			code := map[string]int{"/301": 301, "/302": 302, "/303": 303, "/307": 307, "/308": 308}[p]
			http.Redirect(w, r, "/target", code)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// roundTripperFunc is a fake transport that records it was called.
type roundTripperFunc struct {
	answer func(*http.Request) (*http.Response, error)
	calls  *atomic.Int64
}

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) {
	f.calls.Add(1)
	return f.answer(r)
}

func TestDoAnswersAsTheClientThatRefusesRedirects(t *testing.T) {
	var hits atomic.Int64
	srv := redirectingUpstream(t, &hits)
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	withAuth := strings.Replace(srv.URL, "http://", "http://user:pw@", 1)
	post := func(body io.Reader) func(ctx context.Context, u string) *http.Request {
		return func(ctx context.Context, u string) *http.Request {
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, body)
			if err != nil {
				t.Fatal(err)
			}
			return req
		}
	}
	resendable := func(ctx context.Context, u string) *http.Request {
		return post(bytes.NewReader([]byte(`{"a":1}`)))(ctx, u)
	}
	oneShot := func(ctx context.Context, u string) *http.Request {
		return post(io.NopCloser(strings.NewReader(`{"a":1}`)))(ctx, u)
	}
	cases := []struct {
		name string
		ctx  context.Context
		url  string
		req  func(ctx context.Context, u string) *http.Request
		rt   func(*http.Request) (*http.Response, error) // nil: the default transport
	}{
		{"a plain answer", context.Background(), srv.URL + "/ok", resendable, nil},
		{"301 refused", context.Background(), srv.URL + "/301", resendable, nil},
		{"302 refused", context.Background(), srv.URL + "/302", resendable, nil},
		{"303 refused", context.Background(), srv.URL + "/303", resendable, nil},
		{"307 refused", context.Background(), srv.URL + "/307", resendable, nil},
		{"308 refused", context.Background(), srv.URL + "/308", resendable, nil},
		{"307 whose body cannot be sent again is the answer", context.Background(), srv.URL + "/307", oneShot, nil},
		{"302 without a Location is the answer", context.Background(), srv.URL + "/302-none", resendable, nil},
		{"302 with a Location that does not parse", context.Background(), srv.URL + "/302-bad", resendable, nil},
		{"connection refused", context.Background(), closed.URL + "/ok", resendable, nil},
		{"request context cancelled", cancelled, srv.URL + "/ok", resendable, nil},
		{"credentials in the address become basic auth", context.Background(), withAuth + "/ok", resendable, nil},
		{"a transport answering nothing", context.Background(), srv.URL + "/ok", resendable,
			func(*http.Request) (*http.Response, error) { return nil, nil }},
		{"a transport answering no body", context.Background(), srv.URL + "/ok", resendable,
			func(*http.Request) (*http.Response, error) { return &http.Response{StatusCode: 204}, nil }},
		{"a transport answering no body where one was announced", context.Background(), srv.URL + "/ok", resendable,
			func(*http.Request) (*http.Response, error) {
				return &http.Response{StatusCode: 200, ContentLength: 5}, nil
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var calls atomic.Int64
			var rt http.RoundTripper = http.DefaultTransport
			if tc.rt != nil {
				rt = roundTripperFunc{answer: tc.rt, calls: &calls}
			}
			run := func(do func(*http.Client, *http.Request) (*http.Response, error)) sendOutcome {
				before := hits.Load()
				resp, err := do(&http.Client{Transport: rt}, tc.req(tc.ctx, tc.url))
				return observe(resp, err, hits.Load()-before)
			}
			want := run(func(c *http.Client, r *http.Request) (*http.Response, error) { return NoRedirects(c).Do(r) })
			got := run(Do)
			if got != want {
				t.Errorf("Do:\n got %+v\nwant %+v (the client's)", got, want)
			}
			if tc.rt != nil && calls.Load() != 2 {
				t.Errorf("the transport was called %d times for the two sends, want 2", calls.Load())
			}
			if got.targetHits != 0 {
				t.Errorf("a redirect was followed %d times", got.targetHits)
			}
		})
	}
}
