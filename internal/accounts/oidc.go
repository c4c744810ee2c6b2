package accounts

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/turnpike-gw/turnpike/internal/config"
)

// OIDCCookie holds a sign-in in progress: state, nonce and PKCE verifier,
// sealed with CRYPTO_SECRET, so whichever node receives the callback can
// finish it and nobody can read or forge it.
const OIDCCookie = "turnpike_oidc"

// oidcFlowTTL bounds how long a user may take at the provider.
const oidcFlowTTL = 10 * time.Minute

// OIDC signs users in with an OpenID Connect provider (authorization-code
// flow with state, nonce and PKCE).
type OIDC struct {
	cfg      config.OIDC
	redirect string
	seal     *sealer
	client   *http.Client

	mu       sync.Mutex
	provider *oidc.Provider
}

// NewOIDC returns the client; the provider's discovery document is fetched
// on first use, so a provider that is down does not stop the gateway.
// redirect is the callback address the provider sends the browser back to.
func NewOIDC(cfg config.OIDC, redirect, secret string) *OIDC {
	return &OIDC{cfg: cfg, redirect: redirect, seal: newSealer(secret, "oidc flow"),
		client: &http.Client{Timeout: 15 * time.Second}}
}

// Identity is who the provider says signed in.
type Identity struct {
	Issuer   string
	Subject  string
	Username string
	// LinkUser is the account a link flow was started for (StartLink), 0
	// for a sign-in. It comes from the sealed flow cookie, so it cannot be
	// chosen by whoever finishes the flow.
	LinkUser int64
}

type flowState struct {
	State    string `json:"s"`
	Nonce    string `json:"n"`
	Verifier string `json:"v"`
	Expires  int64  `json:"e"`
	Link     int64  `json:"l,omitempty"`
}

func (o *OIDC) ctx(ctx context.Context) context.Context { return oidc.ClientContext(ctx, o.client) }

// discover returns the provider, fetching its discovery document once it
// answers.
func (o *OIDC) discover(ctx context.Context) (*oidc.Provider, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.provider != nil {
		return o.provider, nil
	}
	// The key set keeps the context it was made with for later refreshes,
	// so it must not be the request's.
	p, err := oidc.NewProvider(o.ctx(context.WithoutCancel(ctx)), o.cfg.Issuer)
	if err != nil {
		return nil, fmt.Errorf("OpenID provider discovery: %w", err)
	}
	o.provider = p
	return p, nil
}

func (o *OIDC) oauth(p *oidc.Provider) *oauth2.Config {
	return &oauth2.Config{ClientID: o.cfg.ClientID, ClientSecret: o.cfg.ClientSecret, Endpoint: p.Endpoint(),
		RedirectURL: o.redirect, Scopes: o.cfg.ScopeList()}
}

// Start begins a sign-in: it returns the provider address to send the
// browser to and the sealed value for OIDCCookie.
func (o *OIDC) Start(ctx context.Context) (authURL, cookie string, err error) {
	return o.start(ctx, 0)
}

// StartLink begins linking the provider's identity to userID, who is
// signed in: the flow is the sign-in's, with the user sealed into the
// cookie so the callback links to that account and to no other.
func (o *OIDC) StartLink(ctx context.Context, userID int64) (authURL, cookie string, err error) {
	if userID <= 0 {
		return "", "", errors.New("accounts: a link needs a signed-in user")
	}
	return o.start(ctx, userID)
}

func (o *OIDC) start(ctx context.Context, link int64) (authURL, cookie string, err error) {
	p, err := o.discover(ctx)
	if err != nil {
		return "", "", err
	}
	fs := flowState{State: codeEncoding.EncodeToString(randomBytes(20)), Nonce: codeEncoding.EncodeToString(randomBytes(20)),
		Verifier: oauth2.GenerateVerifier(), Expires: time.Now().Add(oidcFlowTTL).Unix(), Link: link}
	raw, _ := json.Marshal(fs)
	opts := []oauth2.AuthCodeOption{oidc.Nonce(fs.Nonce), oauth2.S256ChallengeOption(fs.Verifier)}
	if link != 0 {
		// A link binds whoever is signed in at the provider to this
		// account: ask for a fresh sign-in, so a session someone else
		// left open at the provider (or an attacker's, in a link planted
		// on another site) is not the identity linked without a word.
		opts = append(opts, oauth2.SetAuthURLParam("prompt", "login"))
	}
	authURL = o.oauth(p).AuthCodeURL(fs.State, opts...)
	return authURL, o.seal.seal(raw), nil
}

// Sign-in failures the callback tells apart (for the log and the console;
// none reveals anything about an account).
var (
	ErrOIDCState = errors.New("the sign-in was not started here, has expired, or was already used")
	ErrOIDCToken = errors.New("the provider's answer could not be verified")
)

// Finish completes a sign-in from the callback's state and code and the
// sealed cookie: it exchanges the code (with the PKCE verifier), verifies
// the ID token (signature, issuer, audience, expiry) and its nonce, and
// returns who signed in.
func (o *OIDC) Finish(ctx context.Context, cookie, state, code string) (*Identity, error) {
	raw, err := o.seal.open(cookie)
	var fs flowState
	if err != nil || json.Unmarshal(raw, &fs) != nil || time.Now().Unix() > fs.Expires ||
		subtle.ConstantTimeCompare([]byte(fs.State), []byte(state)) != 1 || code == "" {
		return nil, ErrOIDCState
	}
	p, err := o.discover(ctx)
	if err != nil {
		return nil, err
	}
	tok, err := o.oauth(p).Exchange(o.ctx(ctx), code, oauth2.VerifierOption(fs.Verifier))
	if err != nil {
		return nil, fmt.Errorf("%w: code exchange: %v", ErrOIDCToken, err)
	}
	rawID, _ := tok.Extra("id_token").(string)
	if rawID == "" {
		return nil, fmt.Errorf("%w: no id_token in the token answer", ErrOIDCToken)
	}
	idt, err := p.Verifier(&oidc.Config{ClientID: o.cfg.ClientID}).Verify(o.ctx(ctx), rawID)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrOIDCToken, err)
	}
	if subtle.ConstantTimeCompare([]byte(idt.Nonce), []byte(fs.Nonce)) != 1 {
		return nil, fmt.Errorf("%w: nonce does not match", ErrOIDCToken)
	}
	var claims map[string]any
	if err := idt.Claims(&claims); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrOIDCToken, err)
	}
	name, _ := claims[o.cfg.Claim()].(string)
	return &Identity{Issuer: idt.Issuer, Subject: idt.Subject, Username: name, LinkUser: fs.Link}, nil
}

// Issuer is the configured provider, the issuer of every identity it
// verifies.
func (o *OIDC) Issuer() string { return o.cfg.Issuer }
