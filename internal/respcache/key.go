// Package respcache is the response cache's core (CONTRACT §22): the
// canonical key of a request and the bounded stores that keep complete
// answers, in memory on one node or in Redis for several. It knows nothing
// of wire formats or billing: the relay decides what an entry holds, when
// to store one and how a hit is billed.
package respcache

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
)

// Key names one cached answer: a hex SHA-256 of the group, the model and
// the request body in canonical form.
type Key string

// ignored are the members that do not change the answer: how it is
// delivered (stream, and stream_options, which only a stream may carry)
// and who asked (user, metadata).
var ignored = [...]string{"stream", "stream_options", "user", "metadata"}

// ErrNotObject is a body that is not a JSON object: it is not cached.
var ErrNotObject = errors.New("respcache: the request body is not a JSON object")

// KeyOf is the key of a request to model in group with body. The body is
// read with numbers kept as written and re-encoded with sorted members and
// no insignificant space, so two bodies that mean the same (members in
// another order, other spacing) share an entry.
func KeyOf(group, model string, body []byte) (Key, error) {
	return KeyIn("", group, model, body)
}

// KeyIn is KeyOf within a surface's own space of keys: the bodies of a
// surface whose requests could read the same as another's yet mean
// something else (the Responses API's beside the chat formats') never share
// an entry with them. The empty space is KeyOf's.
func KeyIn(space, group, model string, body []byte) (Key, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil || obj == nil {
		return "", ErrNotObject
	}
	for _, k := range ignored {
		delete(obj, k)
	}
	canon, err := json.Marshal(obj) // maps encode with sorted keys
	if err != nil {
		return "", ErrNotObject
	}
	h := sha256.New()
	if space != "" {
		h.Write([]byte(space))
		h.Write([]byte{1})
	}
	h.Write([]byte(group))
	h.Write([]byte{0})
	h.Write([]byte(model))
	h.Write([]byte{0})
	h.Write(canon)
	return Key(hex.EncodeToString(h.Sum(nil))), nil
}
