package mcpgw

import (
	"encoding/json"
	"strconv"

	"github.com/turnpike-gw/turnpike/internal/accounts"
)

// session is what an Mcp-Session-Id carries, sealed with CRYPTO_SECRET:
// the key that opened it, the surface it was opened on ("" for /mcp, a
// server's name for /mcp/<server>) and the upstream session of each server
// opened at initialize. No node keeps sessions, so any node serves any
// request of one; the seal makes it unforgeable and unreadable.
type session struct {
	Key    int64                `json:"k"`
	Scope  string               `json:"s,omitempty"`
	Issued int64                `json:"t"`
	Up     map[string]upSession `json:"u,omitempty"`
}

// upSession is one upstream's session: its id (empty for an upstream that
// keeps none) and the protocol version agreed with it.
type upSession struct {
	ID      string `json:"i,omitempty"`
	Version string `json:"v"`
}

// maxSessionID bounds an Mcp-Session-Id before it is opened: a sealed
// session of a few hundred servers stays far below it.
const maxSessionID = 64 << 10

// sessions seals and opens session ids.
type sessions struct{ seal *accounts.Sealer }

func newSessions(secret string) sessions {
	return sessions{seal: accounts.NewSealer(secret, "mcp session")}
}

func (s sessions) issue(v *session) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	return s.seal.Seal(b), nil
}

// open returns the session an id carries, or nil for an id this gateway
// did not issue (wrong secret, damaged, or made up).
func (s sessions) open(id string) *session {
	if id == "" || len(id) > maxSessionID {
		return nil
	}
	b, err := s.seal.Open(id)
	if err != nil {
		return nil
	}
	var v session
	if json.Unmarshal(b, &v) != nil || v.Key == 0 {
		return nil
	}
	return &v
}

// upKey is a server's key in session.Up: its id, so a server deleted and
// registered again under the same name starts a new upstream session.
func upKey(serverID int64) string { return strconv.FormatInt(serverID, 10) }
