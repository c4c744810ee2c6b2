package task

import (
	"context"
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/turnpike-gw/turnpike/internal/plugin"
	"github.com/turnpike-gw/turnpike/internal/plugin/manifest"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// Upstream kinds of ctx.upstream.kind.
const (
	kindVendor  = "vendor"
	kindPeerAPI = "peer_api"
)

// credentials are what hooks may see of a channel's secret, in the fields
// SPEC names, plus the secrets themselves for scrubbing text.
type credentials struct {
	kind       string
	apiKey     string
	hasAPIKey  bool
	authHeader string
	projectID  string
	secrets    []string
}

// fields adds the credential fields to a hook context. The `auth` object
// goes on every context, the driver's too: the published vertex plugin reads
// ctx.auth.projectId in buildSubmitRequest, not only when querying.
func (c credentials) fields(m map[string]any) {
	m["upstream"] = map[string]any{"kind": c.kind}
	m["authHeader"] = c.authHeader
	if c.hasAPIKey {
		m["apiKey"] = c.apiKey
	}
	a := map[string]any{"authHeader": c.authHeader}
	if c.projectID != "" {
		a["projectId"] = c.projectID
	}
	m["auth"] = a
}

// serviceAccount is the part of a Google-style service-account JSON key the
// token exchange needs.
type serviceAccount struct {
	ClientEmail string `json:"client_email"`
	PrivateKey  string `json:"private_key"`
	TokenURI    string `json:"token_uri"`
	ProjectID   string `json:"project_id"`
	Scope       string `json:"scope"`
}

const defaultTokenURI = "https://oauth2.googleapis.com/token"
const defaultScope = "https://www.googleapis.com/auth/cloud-platform"

// tokenCache keeps exchanged access tokens per credential until shortly
// before they expire.
type tokenCache struct {
	mu     sync.Mutex
	tokens map[string]cachedToken
}

type cachedToken struct {
	token   string
	expires time.Time
}

// credentialsFor resolves a channel's credentials for a plugin's auth type.
// Type 60 channels always use the channel key as a Bearer token: the peer
// is another gateway, and no vendor OAuth flow runs.
func (s *Service) credentialsFor(ctx context.Context, ch *store.Channel, l *plugin.Loaded) (credentials, error) {
	key := strings.TrimSpace(ch.Key)
	base := credentials{kind: kindVendor, secrets: []string{ch.Key, key}}
	if ch.Type == plugin.ChannelTypePeerAPI {
		base.kind = kindPeerAPI
		base.apiKey, base.hasAPIKey, base.authHeader = key, true, "Bearer "+key
		return base, nil
	}
	switch l.Manifest.Auth.Type {
	case manifest.AuthNone:
		return base, nil
	case manifest.AuthVertexOAuth, manifest.AuthOAuth2JWT:
		tok, project, err := s.tokens.exchange(ctx, s.client, key)
		if err != nil {
			return credentials{}, err
		}
		base.authHeader, base.projectID = "Bearer "+tok, project
		base.secrets = append(base.secrets, tok)
		return base, nil
	}
	base.apiKey, base.hasAPIKey, base.authHeader = key, true, "Bearer "+key
	return base, nil
}

// errCredential never carries the key or the token endpoint's answer, which
// may echo parts of the assertion.
var errCredential = errors.New("the channel key is not a usable service-account JSON credential")

func (c *tokenCache) exchange(ctx context.Context, client *http.Client, key string) (string, string, error) {
	var sa serviceAccount
	if err := json.Unmarshal([]byte(key), &sa); err != nil || sa.ClientEmail == "" || sa.PrivateKey == "" {
		return "", "", errCredential
	}
	sum := sha256.Sum256([]byte(key))
	id := hex.EncodeToString(sum[:])
	c.mu.Lock()
	if t, ok := c.tokens[id]; ok && time.Now().Before(t.expires) {
		c.mu.Unlock()
		return t.token, sa.ProjectID, nil
	}
	c.mu.Unlock()
	tok, ttl, err := fetchToken(ctx, client, sa)
	if err != nil {
		return "", "", err
	}
	c.mu.Lock()
	if c.tokens == nil {
		c.tokens = map[string]cachedToken{}
	}
	// Renew a minute early so a token never expires in flight.
	c.tokens[id] = cachedToken{token: tok, expires: time.Now().Add(ttl - time.Minute)}
	c.mu.Unlock()
	return tok, sa.ProjectID, nil
}

func fetchToken(ctx context.Context, client *http.Client, sa serviceAccount) (string, time.Duration, error) {
	tokenURI := sa.TokenURI
	if tokenURI == "" {
		tokenURI = defaultTokenURI
	}
	assertion, err := signAssertion(sa, tokenURI, time.Now())
	if err != nil {
		return "", 0, err
	}
	form := url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:jwt-bearer"}, "assertion": {assertion}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, tokenURI, strings.NewReader(form.Encode()))
	if err != nil {
		return "", 0, errCredential
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := client.Do(req)
	if err != nil {
		return "", 0, fmt.Errorf("the OAuth token endpoint cannot be reached")
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	var out struct {
		AccessToken string `json:"access_token"`
		ExpiresIn   int64  `json:"expires_in"`
	}
	if resp.StatusCode/100 != 2 || json.Unmarshal(body, &out) != nil || out.AccessToken == "" {
		return "", 0, fmt.Errorf("the OAuth token endpoint refused the credential (HTTP %d)", resp.StatusCode)
	}
	ttl := time.Duration(out.ExpiresIn) * time.Second
	if ttl < 2*time.Minute {
		ttl = 2 * time.Minute
	}
	return out.AccessToken, ttl, nil
}

// signAssertion builds the RS256 JWT of the service-account grant.
func signAssertion(sa serviceAccount, aud string, now time.Time) (string, error) {
	block, _ := pem.Decode([]byte(sa.PrivateKey))
	if block == nil {
		return "", errCredential
	}
	var key *rsa.PrivateKey
	if k, err := x509.ParsePKCS8PrivateKey(block.Bytes); err == nil {
		key, _ = k.(*rsa.PrivateKey)
	} else if k, err := x509.ParsePKCS1PrivateKey(block.Bytes); err == nil {
		key = k
	}
	if key == nil {
		return "", errCredential
	}
	scope := sa.Scope
	if scope == "" {
		scope = defaultScope
	}
	enc := base64.RawURLEncoding
	header, _ := json.Marshal(map[string]string{"alg": "RS256", "typ": "JWT"})
	claims, _ := json.Marshal(map[string]any{"iss": sa.ClientEmail, "scope": scope, "aud": aud,
		"iat": now.Unix(), "exp": now.Add(time.Hour).Unix()})
	signing := enc.EncodeToString(header) + "." + enc.EncodeToString(claims)
	digest := sha256.Sum256([]byte(signing))
	sig, err := rsa.SignPKCS1v15(nil, key, crypto.SHA256, digest[:])
	if err != nil {
		return "", errCredential
	}
	return signing + "." + enc.EncodeToString(sig), nil
}
