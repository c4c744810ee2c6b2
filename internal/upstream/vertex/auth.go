package vertex

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/jwt"

	"github.com/turnpike-gw/turnpike/internal/upstream"
)

// cloudPlatformScope is the OAuth scope of Vertex AI calls.
const cloudPlatformScope = "https://www.googleapis.com/auth/cloud-platform"

// earlyRefresh is how long before its expiry an access token is replaced,
// so that no call starts with a token about to lapse.
const earlyRefresh = time.Minute

// tokenTimeout bounds one token exchange; it runs apart from any client's
// request, so that a client who leaves does not spoil the token for others.
const tokenTimeout = 30 * time.Second

// Bounds of the account cache: at most maxAccounts service accounts, and
// one unused for idleAccount is dropped when room is needed.
const (
	maxAccounts = 256
	idleAccount = 24 * time.Hour
)

// account is one service account in use: its project and its token
// source, which exchanges a signed JWT at the account's token_uri, keeps
// the access token until shortly before it expires, and lets one caller
// refresh while the others wait for that refresh.
type account struct {
	project  string
	src      oauth2.TokenSource
	lastUsed time.Time // guarded by accountCache.mu
}

// accountKey names a cached account: a digest of the key, never the key,
// and the HTTP client its exchanges use.
type accountKey struct {
	sum    [sha256.Size]byte
	client *http.Client
}

type accountCache struct {
	mu sync.Mutex
	m  map[accountKey]*account
}

var accounts = &accountCache{m: map[accountKey]*account{}}

// get returns the account of a service-account key, read and cached the
// first time it is used with client.
func (c *accountCache) get(key string, client *http.Client) (*account, error) {
	k := accountKey{sum: sha256.Sum256([]byte(key)), client: client}
	c.mu.Lock()
	a, ok := c.m[k]
	if ok {
		a.lastUsed = time.Now()
	}
	c.mu.Unlock()
	if ok {
		return a, nil
	}
	// Read the key outside the lock: parsing an RSA key takes a while.
	cred, err := parseKey(key)
	if err != nil {
		return nil, err
	}
	if cred.account == nil {
		return nil, keyError("is not a service account JSON key")
	}
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if a, ok := c.m[k]; ok {
		a.lastUsed = now
		return a, nil
	}
	c.makeRoom(now)
	a = &account{project: strings.TrimSpace(cred.account.ProjectID), src: tokenSource(cred.account, client), lastUsed: now}
	c.m[k] = a
	return a, nil
}

// makeRoom drops accounts unused for a day once the cache is full, and the
// least recently used one when that was not enough.
func (c *accountCache) makeRoom(now time.Time) {
	if len(c.m) < maxAccounts {
		return
	}
	var oldest accountKey
	var oldestAt time.Time
	for k, a := range c.m {
		if now.Sub(a.lastUsed) > idleAccount {
			delete(c.m, k)
			continue
		}
		if oldestAt.IsZero() || a.lastUsed.Before(oldestAt) {
			oldest, oldestAt = k, a.lastUsed
		}
	}
	if len(c.m) >= maxAccounts {
		delete(c.m, oldest)
	}
}

// tokenSource is the account's cached token source. Its exchanges use
// client (without redirects, and with a deadline of their own) on a
// context of their own, never a client's request context.
func tokenSource(sa *serviceAccount, client *http.Client) oauth2.TokenSource {
	hc := upstream.NoRedirects(client)
	if hc.Timeout == 0 || hc.Timeout > tokenTimeout {
		hc.Timeout = tokenTimeout
	}
	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, hc)
	scope := strings.TrimSpace(sa.Scope)
	if scope == "" {
		scope = cloudPlatformScope
	}
	cfg := &jwt.Config{
		Email:        sa.ClientEmail,
		PrivateKey:   []byte(sa.PrivateKey),
		PrivateKeyID: sa.PrivateKeyID,
		Scopes:       []string{scope},
		TokenURL:     sa.TokenURI,
	}
	return oauth2.ReuseTokenSourceWithExpiry(nil, nonEmpty{cfg.TokenSource(ctx)}, earlyRefresh)
}

// nonEmpty refuses an answer without an access token, which would
// otherwise be fetched again on every call.
type nonEmpty struct{ src oauth2.TokenSource }

func (s nonEmpty) Token() (*oauth2.Token, error) {
	t, err := s.src.Token()
	if err == nil && t.AccessToken == "" {
		err = errors.New("the token endpoint's answer has no access_token")
	}
	return t, err
}

// ServiceAccountToken is the access token of a service-account JSON key
// and the key's project_id, from the same cached token source Vertex AI
// channels use (one exchange per key and client until shortly before the
// token expires). Task plugins with Google-style OAuth take their
// credentials from here. Errors never quote the key or the token
// endpoint's answer.
func ServiceAccountToken(ctx context.Context, key string, client *http.Client) (token, project string, err error) {
	a, err := accounts.get(key, client)
	if err != nil {
		return "", "", err
	}
	tok, err := a.token(ctx)
	if err != nil {
		return "", "", err
	}
	return tok, a.project, nil
}

// token returns the account's access token, waiting for an exchange no
// longer than ctx; the exchange itself goes on for the callers after it.
func (a *account) token(ctx context.Context) (string, error) {
	type result struct {
		tok *oauth2.Token
		err error
	}
	done := make(chan result, 1)
	go func() {
		t, err := a.src.Token()
		done <- result{t, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			return "", tokenError(r.err)
		}
		return r.tok.AccessToken, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// tokenError says why no access token came, without the token endpoint's
// answer (which may repeat parts of the request) or any of the key.
func tokenError(err error) error {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) && re.Response != nil {
		return fmt.Errorf("vertex: the service account's token endpoint refused the key (HTTP %d)", re.Response.StatusCode)
	}
	return errors.New("vertex: no access token could be had from the service account's token endpoint")
}
