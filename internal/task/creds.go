package task

import (
	"context"
	"strings"

	"github.com/turnpike-gw/turnpike/internal/plugin"
	"github.com/turnpike-gw/turnpike/internal/plugin/manifest"
	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/upstream/vertex"
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

// credentialsFor resolves a channel's credentials for a plugin's auth type.
// A service-account JSON key (vertex_oauth, oauth2_jwt) is exchanged for an
// access token by the token source Vertex AI channels use, so one key has
// one cached token whichever surface uses it.
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
		tok, project, err := vertex.ServiceAccountToken(ctx, key, s.client)
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
