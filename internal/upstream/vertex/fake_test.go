package vertex

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// testAccount is a service account made for one test: a fresh RSA key and
// a fake token endpoint that checks the signed JWT the way Google does.
type testAccount struct {
	email   string
	project string
	pemKey  string
	pub     *rsa.PublicKey
	tokens  *tokenServer
}

func newRSAKey(t testing.TB) (*rsa.PrivateKey, string) {
	t.Helper()
	pk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(pk)
	if err != nil {
		t.Fatal(err)
	}
	return pk, string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
}

// newTestAccount starts the token endpoint; its tokens last expiresIn
// seconds.
func newTestAccount(t testing.TB, expiresIn int) *testAccount {
	t.Helper()
	pk, pemKey := newRSAKey(t)
	a := &testAccount{email: "gateway@proj-a.iam.gserviceaccount.com", project: "proj-a", pemKey: pemKey, pub: &pk.PublicKey}
	a.tokens = newTokenServer(t, a, expiresIn)
	return a
}

// key is the account's JSON key file, pretty-printed as Google hands it
// out, naming the fake token endpoint.
func (a *testAccount) key() string {
	b, _ := json.MarshalIndent(map[string]string{
		"type": "service_account", "project_id": a.project, "private_key_id": "kid-1",
		"private_key": a.pemKey, "client_email": a.email, "client_id": "1234567890",
		"token_uri": a.tokens.URL + "/token",
	}, "", "  ")
	return string(b)
}

// tokenServer is a fake OAuth token endpoint for the JWT-bearer grant.
type tokenServer struct {
	*httptest.Server
	exchanges atomic.Int64
	expiresIn int
	// gate, when set, holds each exchange until it is closed.
	gate chan struct{}
	// refuse answers every exchange with this status.
	refuse int

	mu       sync.Mutex
	problems []string
}

func newTokenServer(t testing.TB, a *testAccount, expiresIn int) *tokenServer {
	s := &tokenServer{expiresIn: expiresIn}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.gate != nil {
			<-s.gate
		}
		n := s.exchanges.Add(1)
		if s.refuse != 0 {
			w.WriteHeader(s.refuse)
			fmt.Fprintf(w, `{"error":"invalid_grant","error_description":"echo of %s"}`, a.pemKey)
			return
		}
		if problem := checkGrant(r, a, "http://"+r.Host+"/token"); problem != "" {
			s.mu.Lock()
			s.problems = append(s.problems, problem)
			s.mu.Unlock()
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"error":"invalid_grant","error_description":%q}`, problem)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"access_token":"ya29.token-%d","expires_in":%d,"token_type":"Bearer"}`, n, s.expiresIn)
	}))
	t.Cleanup(func() {
		s.Close()
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, p := range s.problems {
			t.Errorf("token endpoint: %s", p)
		}
	})
	return s
}

// checkGrant verifies a token request as Google's endpoint does: the
// JWT-bearer grant, an RS256 assertion signed by the account's key, issued
// by its client_email for this endpoint, asking for cloud-platform, and
// lasting at most an hour.
func checkGrant(r *http.Request, a *testAccount, aud string) string {
	if r.Method != http.MethodPost || r.URL.Path != "/token" {
		return "unexpected " + r.Method + " " + r.URL.Path
	}
	if err := r.ParseForm(); err != nil {
		return "unreadable form"
	}
	if g := r.PostForm.Get("grant_type"); g != "urn:ietf:params:oauth:grant-type:jwt-bearer" {
		return "grant_type is " + g
	}
	parts := strings.Split(r.PostForm.Get("assertion"), ".")
	if len(parts) != 3 {
		return "the assertion is not a JWS"
	}
	var header struct {
		Alg string `json:"alg"`
		Typ string `json:"typ"`
		Kid string `json:"kid"`
	}
	var claims struct {
		Iss   string `json:"iss"`
		Aud   string `json:"aud"`
		Scope string `json:"scope"`
		Iat   int64  `json:"iat"`
		Exp   int64  `json:"exp"`
	}
	if !decodeSegment(parts[0], &header) || !decodeSegment(parts[1], &claims) {
		return "the assertion's header or claims are not JSON"
	}
	if header.Alg != "RS256" || header.Kid != "kid-1" {
		return fmt.Sprintf("header alg %q kid %q, want RS256 and kid-1", header.Alg, header.Kid)
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err != nil || rsa.VerifyPKCS1v15(a.pub, crypto.SHA256, digest[:], sig) != nil {
		return "the assertion's signature does not verify with the account's public key"
	}
	if claims.Iss != a.email {
		return "iss is " + claims.Iss
	}
	if claims.Aud != aud {
		return "aud is " + claims.Aud + ", want " + aud
	}
	if !strings.Contains(" "+claims.Scope+" ", " https://www.googleapis.com/auth/cloud-platform ") {
		return "scope is " + claims.Scope
	}
	now := time.Now().Unix()
	if claims.Exp-claims.Iat > 3600 || claims.Exp <= now || claims.Iat > now+5 {
		return fmt.Sprintf("iat %d exp %d is not a validity of at most an hour around now", claims.Iat, claims.Exp)
	}
	return ""
}

func decodeSegment(s string, v any) bool {
	b, err := base64.RawURLEncoding.DecodeString(s)
	return err == nil && json.Unmarshal(b, v) == nil
}
