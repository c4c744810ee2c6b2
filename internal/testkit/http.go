package testkit

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/auth"
)

// DoRaw sends one request to the gateway and returns the response, whose
// body the caller closes. A non-nil body is sent as is when it is a string
// or []byte and as JSON otherwise; bearer, when not empty, is sent as the
// Authorization header. A transport error fails the test.
func (g *Gateway) DoRaw(t testing.TB, method, path, bearer string, body any) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, g.URL+path, requestBody(t, body))
	if err != nil {
		t.Fatalf("testkit: %s %s: %v", method, path, err)
	}
	req.Header.Set("Content-Type", "application/json")
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("testkit: %s %s: %v", method, path, err)
	}
	return resp
}

// Do sends one request like DoRaw and returns the status and the body as a
// JSON object. A body that is not a JSON object comes back as
// {"raw": "<body text>"}, so a failure message can still show it.
func (g *Gateway) Do(t testing.TB, method, path, bearer string, body any) (int, map[string]any) {
	t.Helper()
	resp := g.DoRaw(t, method, path, bearer, body)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("testkit: %s %s: reading the answer: %v", method, path, err)
	}
	var out map[string]any
	if json.Unmarshal(raw, &out) != nil || out == nil {
		out = map[string]any{"raw": string(raw)}
	}
	return resp.StatusCode, out
}

func requestBody(t testing.TB, body any) io.Reader {
	switch b := body.(type) {
	case nil:
		return nil
	case string:
		return bytes.NewReader([]byte(b))
	case []byte:
		return bytes.NewReader(b)
	}
	data, err := json.Marshal(body)
	if err != nil {
		t.Fatalf("testkit: encoding the request body: %v", err)
	}
	return bytes.NewReader(data)
}

// Login signs in through POST /api/auth/login and returns the session
// cookie, for tests that act as a console user. A failed sign-in fails the
// test.
func (g *Gateway) Login(t testing.TB, username, password string) *http.Cookie {
	t.Helper()
	resp := g.DoRaw(t, http.MethodPost, "/api/auth/login", "", map[string]string{"username": username, "password": password})
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		raw, _ := io.ReadAll(resp.Body)
		t.Fatalf("testkit: login as %s: %d %s", username, resp.StatusCode, raw)
	}
	for _, c := range resp.Cookies() {
		if c.Name == auth.SessionCookie {
			return &http.Cookie{Name: c.Name, Value: c.Value}
		}
	}
	t.Fatalf("testkit: login as %s set no session cookie", username)
	return nil
}
