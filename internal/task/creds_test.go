package task

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/billing"
	"github.com/turnpike-gw/turnpike/internal/plugin"
	"github.com/turnpike-gw/turnpike/internal/plugin/manifest"
	"github.com/turnpike-gw/turnpike/internal/store"
)

func loadedWithAuth(auth string) *plugin.Loaded {
	return &plugin.Loaded{Key: "p", Manifest: &manifest.Manifest{Auth: manifest.Auth{Type: auth}}}
}

func TestCredentialsPerAuthTypeAndChannelType(t *testing.T) {
	s := New(Deps{Store: nil, Client: &http.Client{}})
	tests := []struct {
		name       string
		chType     int
		auth       string
		wantKind   string
		wantHeader string
		wantAPIKey bool
	}{
		{"api_key", plugin.ChannelTypeTaskPlugin, manifest.AuthAPIKey, kindVendor, "Bearer k-123", true},
		{"none gives no credential", plugin.ChannelTypeTaskPlugin, manifest.AuthNone, kindVendor, "", false},
		{"type 60 is a peer gateway with the Bearer channel key", plugin.ChannelTypePeerAPI, manifest.AuthNone, kindPeerAPI, "Bearer k-123", true},
		{"type 60 never runs an OAuth flow", plugin.ChannelTypePeerAPI, manifest.AuthVertexOAuth, kindPeerAPI, "Bearer k-123", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cr, err := s.credentialsFor(context.Background(), &store.Channel{Type: tt.chType, Key: " k-123 "}, loadedWithAuth(tt.auth))
			if err != nil {
				t.Fatal(err)
			}
			m := map[string]any{}
			cr.fields(m)
			if m["upstream"].(map[string]any)["kind"] != tt.wantKind || m["authHeader"] != tt.wantHeader {
				t.Errorf("fields = %v", m)
			}
			if _, has := m["apiKey"]; has != tt.wantAPIKey {
				t.Errorf("apiKey present = %v, want %v", has, tt.wantAPIKey)
			}
		})
	}
}

func TestVertexOAuthExchangesAServiceAccountAndCachesTheToken(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKCS8PrivateKey(key)
	var calls atomic.Int32
	var scopes sync.Map // scope claim → true
	tokenSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		_ = r.ParseForm()
		parts := strings.Split(r.PostForm.Get("assertion"), ".")
		if r.PostForm.Get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer" || len(parts) != 3 {
			w.WriteHeader(400)
			return
		}
		var claims struct {
			Iss, Scope string
		}
		raw, _ := base64.RawURLEncoding.DecodeString(parts[1])
		if json.Unmarshal(raw, &claims) != nil || claims.Iss != "svc@p.iam.test" {
			w.WriteHeader(400)
			return
		}
		scopes.Store(claims.Scope, true)
		_, _ = w.Write([]byte(`{"access_token":"ya29.token","expires_in":3600}`))
	}))
	defer tokenSrv.Close()
	sa, _ := json.Marshal(map[string]string{"client_email": "svc@p.iam.test", "project_id": "proj-1", "token_uri": tokenSrv.URL,
		"private_key": string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))})
	s := New(Deps{Client: &http.Client{}})
	ch := &store.Channel{Type: 41, Key: string(sa)}
	for range 2 {
		cr, err := s.credentialsFor(context.Background(), ch, loadedWithAuth(manifest.AuthVertexOAuth))
		if err != nil {
			t.Fatal(err)
		}
		q := queryContext(&Task{}, ch, loadedWithAuth(manifest.AuthVertexOAuth), cr)
		if q["authHeader"] != "Bearer ya29.token" || q["auth"].(map[string]any)["projectId"] != "proj-1" {
			t.Fatalf("query context = %v", q)
		}
		if _, has := q["apiKey"]; has {
			t.Error("the service-account JSON reached hooks as apiKey")
		}
	}
	if calls.Load() != 1 {
		t.Errorf("token endpoint called %d times, want 1 (cached)", calls.Load())
	}
	if _, ok := scopes.Load("https://www.googleapis.com/auth/cloud-platform"); !ok {
		t.Error("the grant did not ask for the cloud-platform scope")
	}
	// A key naming its own scope (a vendor's API behind a Google-style
	// grant) is exchanged for that scope.
	scoped, _ := json.Marshal(map[string]string{"client_email": "svc@p.iam.test", "token_uri": tokenSrv.URL, "scope": "https://vendor.test/api",
		"private_key": string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))})
	if _, err := s.credentialsFor(context.Background(), &store.Channel{Type: 41, Key: string(scoped)}, loadedWithAuth(manifest.AuthOAuth2JWT)); err != nil {
		t.Fatal(err)
	}
	if _, ok := scopes.Load("https://vendor.test/api"); !ok {
		t.Error("the key's own scope did not reach the token endpoint")
	}
	_, err = s.credentialsFor(context.Background(), &store.Channel{Key: "not json"}, loadedWithAuth(manifest.AuthOAuth2JWT))
	if err == nil || strings.Contains(err.Error(), "not json") {
		t.Errorf("a bad credential = %v, want an error that does not echo it", err)
	}
}

func TestScrubRemovesSecretsAndTruncates(t *testing.T) {
	got := scrub("key sk-abcdef leaked twice: sk-abcdef", "sk-abcdef", "", "ab")
	if strings.Contains(got, "sk-abcdef") || !strings.Contains(got, "[redacted]") {
		t.Errorf("scrub = %q", got)
	}
	long := strings.Repeat("é", 400)
	if got := scrub(long); len(got) > maxClientErrorBytes+len("…") || !strings.HasSuffix(got, "…") {
		t.Errorf("scrub did not truncate: %d bytes", len(got))
	}
}

func TestTaskPricing(t *testing.T) {
	schema := manifest.UsageSchema{"seconds": {Type: "number", Unit: "second"}, "hd": {Type: "boolean"}, "res": {Enum: []string{"720p", "1080p"}}}
	if _, err := validateFacts(schema, map[string]any{"seconds": int64(3), "hd": true, "res": "720p"}); err != nil {
		t.Errorf("valid facts refused: %v", err)
	}
	perUnit := billing.NewPrice(store.ModelPrice{Name: "m", PerCall: 0.01, Extra: json.RawMessage(`{"per_unit":{"seconds":0.5}}`)})
	cost, err := taskCost(perUnit, schema, map[string]any{"seconds": int64(3)})
	if err != nil || cost.RatString() != "151/100" {
		t.Errorf("per-call plus 3 × 0.5 = %v, %v; want 1.51", cost, err)
	}
	if _, err := taskCost(billing.NewPrice(store.ModelPrice{Name: "m", Extra: json.RawMessage(`{"per_unit":{"frames":1}}`)}), schema, nil); err == nil {
		t.Error("a per_unit rate on a fact outside the schema was accepted")
	}
	if _, err := taskCost(billing.NewPrice(store.ModelPrice{Name: "m", InputPerMTok: 1}), schema, nil); err == nil {
		t.Error("a token-only price was accepted for a task")
	}
	if _, err := taskCost(perUnit, schema, map[string]any{"seconds": float64(2e12)}); err == nil {
		t.Error("an absurd stored fact was priced")
	}
	if c, err := taskCost(billing.NewPrice(store.ModelPrice{Name: "m", Free: true}), schema, nil); err != nil || c.Sign() != 0 {
		t.Errorf("a free model costs %v, %v", c, err)
	}
	for _, bad := range []map[string]any{{"frames": int64(1)}, {"seconds": "3"}, {"seconds": float64(-1)}, {"hd": "yes"}, {"res": "4k"},
		{"seconds": float64(1e13)}, {"seconds": int64(1) << 62}} {
		if _, err := validateFacts(schema, bad); err == nil {
			t.Errorf("facts %v accepted", bad)
		}
	}
}
