package task

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"time"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/plugin"
	"github.com/turnpike-gw/turnpike/internal/plugin/manifest"
	"github.com/turnpike-gw/turnpike/internal/task/egress"
)

// Artifact limits of PLUGIN-CONTEXT.md.
const (
	maxArtifacts = 64
	// artifactLinkTTL is how long a signed artifact address stays valid:
	// long enough for a client to fetch a finished result at leisure, short
	// enough that a leaked address does not work forever.
	artifactLinkTTL = 24 * time.Hour
)

var artifactKeyPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._~-]{0,127}$`)

var artifactTypes = map[string]bool{"video": true, "audio": true, "image": true, "file": true}

// ArtifactLink is one artifact of a finished task as clients see it.
type ArtifactLink struct {
	Key      string
	Type     string
	MIMEType string
	// URL is signed with the gateway secret and rooted at PublicAddress.
	URL string
}

// artifact is one validated listArtifacts item.
type artifact struct {
	key, typ, mime string
}

// ArtifactLinks lists the task's artifacts (listArtifacts) with signed
// URLs; nil, nil when the plugin has no artifact hooks.
func (s *Service) ArtifactLinks(ctx context.Context, t *Task) ([]ArtifactLink, error) {
	l, ok := s.PluginFor(ctx, t)
	if !ok || !l.Manifest.Hooks.Has(manifest.HookListArtifacts) {
		return nil, nil
	}
	list, err := s.listArtifacts(ctx, l, t)
	if err != nil {
		return nil, err
	}
	exp := time.Now().Add(artifactLinkTTL)
	links := make([]ArtifactLink, 0, len(list))
	for _, a := range list {
		links = append(links, ArtifactLink{Key: a.key, Type: a.typ, MIMEType: a.mime, URL: s.ArtifactURL(t.PublicID, a.key, exp)})
	}
	return links, nil
}

// listArtifacts runs listArtifacts and validates its answer.
func (s *Service) listArtifacts(ctx context.Context, l *plugin.Loaded, t *Task) ([]artifact, error) {
	v, err := call(ctx, l, manifest.HookListArtifacts, artifactContext(t))
	if err != nil {
		return nil, hookError(502, "artifacts_failed", err, nil)
	}
	list, err := parseArtifacts(v)
	if err != nil {
		return nil, &ir.Error{Status: 502, Kind: ir.KindUpstream, Code: "artifacts_failed",
			Message: "the plugin's artifact list is invalid: " + err.Error()}
	}
	return list, nil
}

// parseArtifacts checks a listArtifacts answer: an array (null means none)
// of {key, type, mimeType?} with unique, well-formed keys.
func parseArtifacts(v any) ([]artifact, error) {
	if v == nil {
		return nil, nil
	}
	items, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("listArtifacts must return an array")
	}
	if len(items) > maxArtifacts {
		return nil, fmt.Errorf("at most %d artifacts, got %d", maxArtifacts, len(items))
	}
	seen := map[string]bool{}
	out := make([]artifact, 0, len(items))
	for i, it := range items {
		m, ok := it.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("[%d] must be an object {key, type, mimeType?}", i)
		}
		var a artifact
		a.key, _ = m["key"].(string)
		a.typ, _ = m["type"].(string)
		a.mime, _ = m["mimeType"].(string)
		switch {
		case !artifactKeyPattern.MatchString(a.key):
			return nil, fmt.Errorf("[%d].key must match %s", i, artifactKeyPattern)
		case seen[a.key]:
			return nil, fmt.Errorf("[%d].key %q is listed twice", i, a.key)
		case !artifactTypes[a.typ]:
			return nil, fmt.Errorf("[%d].type must be video, audio, image or file", i)
		}
		if mv, present := m["mimeType"]; present && mv != nil {
			if _, ok := mv.(string); !ok {
				return nil, fmt.Errorf("[%d].mimeType must be a string", i)
			}
		}
		seen[a.key] = true
		out = append(out, a)
	}
	return out, nil
}

// artifactContext is the artifact context of PLUGIN-CONTEXT.md.
func artifactContext(t *Task) map[string]any {
	return map[string]any{"taskId": t.PublicID, "status": t.Status, "action": t.Action, "data": rawOrNil(t.Data),
		"state": rawOrNil(t.State), "producerVersion": t.PluginVersion, "resultUrl": t.ResultURL}
}

// StreamArtifact relays one artifact's content for r to w: the key must be
// listed, buildContentRequest builds the upstream request, the host checks
// where it goes and relays the safe parts of the answer. An error means
// nothing was written; the caller words it in its dialect.
func (s *Service) StreamArtifact(w http.ResponseWriter, r *http.Request, t *Task, key string) error {
	ctx := r.Context()
	l, ok := s.PluginFor(ctx, t)
	if !ok || !l.Manifest.Hooks.Has(manifest.HookListArtifacts) {
		return artifactNotFound(key)
	}
	list, err := s.listArtifacts(ctx, l, t)
	if err != nil {
		return err
	}
	if !listed(list, key) {
		return artifactNotFound(key)
	}
	ch, err := s.channel(ctx, t)
	if err != nil {
		return &ir.Error{Status: 502, Kind: ir.KindUpstream, Code: "channel_unavailable", Message: "the task's channel is gone"}
	}
	cr, err := s.credentialsFor(ctx, ch, l)
	if err != nil {
		return &ir.Error{Status: 502, Kind: ir.KindUpstream, Code: "channel_credentials", Message: "the channel's credentials cannot be used"}
	}
	cctx := contentContext(t, ch, l, cr, key, r)
	v, err := call(ctx, l, manifest.HookBuildContentRequest, cctx)
	if err != nil {
		return hookError(502, "content_failed", err, cr.secrets)
	}
	cd, err := egress.ParseContentDescriptor(v, egress.Policy{Channel: parseBase(channelBase(ch, l)), Allowed: l.Manifest.AllowedHosts})
	if err != nil {
		return &ir.Error{Status: 502, Kind: ir.KindUpstream, Code: "content_failed", Message: scrub(err.Error(), cr.secrets...)}
	}
	return s.relayContent(w, r, cd, cr.secrets)
}

func listed(list []artifact, key string) bool {
	for _, a := range list {
		if a.key == key {
			return true
		}
	}
	return false
}

func artifactNotFound(key string) *ir.Error {
	return &ir.Error{Status: 404, Kind: ir.KindNotFound, Code: "artifact_not_found", Message: fmt.Sprintf("artifact %s not found", key)}
}
