package app_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/testkit"
)

// capture is an upstream that records the credentials of every request it
// receives.
type capture struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string
}

func newCapture(t *testing.T) *capture {
	c := &capture{}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		c.seen = append(c.seen, r.Header.Get("Authorization")+" "+r.Header.Get("x-api-key")+" "+r.URL.RawQuery)
		c.mu.Unlock()
		w.WriteHeader(http.StatusUnauthorized)
	}))
	t.Cleanup(c.Close)
	return c
}

func (c *capture) received(secret string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.seen {
		if strings.Contains(s, secret) {
			return true
		}
	}
	return false
}

func TestMovingAChannelToAnotherHostNeedsItsKey(t *testing.T) {
	const rootToken = "root-token-for-channel-key-tests"
	const secret = "sk-provider-secret-of-the-owner"
	home, thief := newCapture(t), newCapture(t)
	weight := 1
	g := testkit.Start(t, testkit.WithRootToken(rootToken),
		testkit.WithUsers(config.SeedUser{Username: "ada", Password: "ada-pass", Role: "admin", Group: "default"}),
		testkit.WithChannels(config.SeedChannel{Name: "main", Type: "openai", BaseURL: home.URL, Key: secret,
			Models: []string{"m"}, Groups: []string{"default"}, Weight: &weight}))
	cookie := g.Login(t, "ada", "ada-pass")
	_, list := g.Do(t, "GET", "/api/channels", rootToken, nil)
	id := fmt.Sprint(int64(list["items"].([]any)[0].(map[string]any)["id"].(float64)))
	asAdmin := func(method, path, body string) (int, string) {
		return browserRequest{method: method, path: path, body: body, contentType: "application/json", cookie: true}.send(t, g, cookie, rootToken)
	}
	cases := []struct {
		name   string
		patch  string
		root   bool
		status int
		want   string
	}{
		{"an admin cannot move the channel without giving the key", `{"base_url":"` + thief.URL + `"}`, false, 400, `key is required`},
		{"an admin may change the path on the same host", `{"base_url":"` + home.URL + `/v1"}`, false, 200, ""},
		{"an admin may move the channel with a new key", `{"base_url":"` + thief.URL + `","key":"sk-admins-own-key"}`, false, 200, ""},
		{"root may move the channel and keep the key", `{"base_url":"` + home.URL + `"}`, true, 200, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, body := asAdmin("PATCH", "/api/channels/"+id, tc.patch)
			if tc.root {
				status, body = browserRequest{method: "PATCH", path: "/api/channels/" + id, body: tc.patch, bearer: true}.send(t, g, nil, rootToken)
			}
			if status != tc.status || !strings.Contains(body, tc.want) {
				t.Fatalf("status %d %s, want %d with %q", status, body, tc.status, tc.want)
			}
			if status, body := asAdmin("POST", "/api/channels/"+id+"/test", ""); status != 200 {
				t.Fatalf("channel test: %d %s", status, body)
			}
			if thief.received(secret) {
				t.Fatal("the stored key reached a host its owner never set")
			}
		})
	}
	if !home.received(secret) {
		t.Fatal("the channel tests never reached the owner's host; the test proves nothing")
	}
}
