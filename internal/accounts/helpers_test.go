package accounts_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/testkit"
)

const rootToken = "accounts-root-token"

// answer is one response from the gateway.
type answer struct {
	status int
	body   map[string]any
	raw    string
	resp   *http.Response
}

// session returns the session cookie the answer set, or nil.
func (a answer) session() *http.Cookie {
	for _, c := range a.resp.Cookies() {
		if c.Name == auth.SessionCookie && c.Value != "" {
			return &http.Cookie{Name: c.Name, Value: c.Value}
		}
	}
	return nil
}

// noRedirect keeps 302s visible to the test.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// call sends one request with an optional bearer token or cookies.
func call(t testing.TB, g *testkit.Gateway, method, path string, body any, bearer string, cookies ...*http.Cookie) answer {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, g.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	for _, c := range cookies {
		if c != nil {
			req.AddCookie(c)
		}
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	a := answer{status: resp.StatusCode, raw: string(raw), resp: resp}
	_ = json.Unmarshal(raw, &a.body)
	return a
}

func num(v any) int64 {
	f, _ := v.(float64)
	return int64(f)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
