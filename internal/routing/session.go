package routing

import (
	"github.com/cespare/xxhash/v2"

	"github.com/turnpike-gw/turnpike/internal/ir"
)

// SessionSources are a request's explicit session ids, each empty when the
// request has none; the first one set is the session (CONTRACT §14).
type SessionSources struct {
	// PromptCacheKey is the OpenAI-style prompt_cache_key.
	PromptCacheKey string
	// MetadataUserID is the messages-native metadata.user_id.
	MetadataUserID string
	// Header is X-Turnpike-Session.
	Header string
	// User is the OpenAI-style user.
	User string
}

// Session sources, as the tests and the docs name them.
const (
	SessionFromPromptCacheKey = "prompt_cache_key"
	SessionFromMetadataUserID = "metadata.user_id"
	SessionFromHeader         = "header"
	SessionFromUser           = "user"
	SessionFromPrefix         = "prefix"
)

// First is the session id the request names and where it came from; ""
// when it names none.
func (s SessionSources) First() (id, from string) {
	switch {
	case s.PromptCacheKey != "":
		return s.PromptCacheKey, SessionFromPromptCacheKey
	case s.MetadataUserID != "":
		return s.MetadataUserID, SessionFromMetadataUserID
	case s.Header != "":
		return s.Header, SessionFromHeader
	case s.User != "":
		return s.User, SessionFromUser
	}
	return "", ""
}

// Session is the pin key of a request. It belongs to one user (CONTRACT
// §14): User is a field of its own, not only an input of the hash, so that
// no chosen session id can make another user's hash and land on, read or
// re-pin that user's session.
type Session struct {
	User int64
	Hash uint64
}

// SessionKey is the pin key of a request: its user, the group and model it
// is routed for (a pin names a channel only those reach) and its session —
// the first explicit id, else the prompt's prefix (model, system prompt,
// tool definitions, first user message), which is what a provider's cache
// keys on.
func SessionKey(user int64, group, model string, src SessionSources, req *ir.Request) Session {
	return Session{User: user, Hash: sessionHash(group, model, src, req)}
}

func sessionHash(group, model string, src SessionSources, req *ir.Request) uint64 {
	var h hasher
	h.d.Reset()
	h.str(group)
	h.str(model)
	if id, from := src.First(); id != "" {
		h.str(from)
		h.str(id)
		return h.d.Sum64()
	}
	h.str(SessionFromPrefix)
	if req == nil {
		return h.d.Sum64()
	}
	for i := range req.System {
		h.part(&req.System[i])
	}
	h.sep()
	for i := range req.Tools {
		t := &req.Tools[i]
		h.str(t.Name)
		h.str(t.Description)
		h.bytes(t.Parameters)
		h.bytes(t.Native)
	}
	h.sep()
	for i := range req.Messages {
		m := &req.Messages[i]
		if m.Role == ir.RoleSystem {
			// Formats that keep the system prompt among the messages.
			for j := range m.Parts {
				h.part(&m.Parts[j])
			}
			continue
		}
		if m.Role != ir.RoleUser {
			continue
		}
		h.sep()
		for j := range m.Parts {
			h.part(&m.Parts[j])
		}
		break
	}
	return h.d.Sum64()
}

// hasher feeds a request's parts to xxHash64 (fast, and the same on
// every node, which Go's own maphash is not), ending each field with a
// separator so "ab"+"c" and "a"+"bc" differ. It works in place: hashing a
// request allocates nothing.
type hasher struct{ d xxhash.Digest }

var sep = []byte{0xff}

func (h *hasher) str(s string) {
	_, _ = h.d.WriteString(s)
	h.sep()
}

func (h *hasher) bytes(b []byte) {
	_, _ = h.d.Write(b)
	h.sep()
}

func (h *hasher) sep() { _, _ = h.d.Write(sep) }

func (h *hasher) part(p *ir.Part) {
	h.str(string(p.Kind))
	h.str(p.Text)
	if p.Media != nil {
		h.str(p.Media.URL)
		h.str(p.Media.Data)
	}
	if p.ToolResult != nil {
		for i := range p.ToolResult.Content {
			h.str(p.ToolResult.Content[i].Text)
		}
	}
}
