package relay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol"
	"github.com/turnpike-gw/turnpike/internal/routing"
	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/upstream"
)

// ProbeKind is what a probe asks a channel for: chat, or embeddings for a
// channel that serves only embedding models. settings.probe ("chat" or
// "embeddings") overrides the guess from the model names.
func ProbeKind(c *store.Channel) string {
	if k, _ := c.Settings["probe"].(string); k == "chat" || k == "embeddings" {
		return k
	}
	if len(c.Models) == 0 {
		return "chat"
	}
	for _, m := range c.Models {
		if !isEmbeddingModel(m) {
			return "chat"
		}
	}
	return "embeddings"
}

func isEmbeddingModel(m string) bool {
	m = strings.ToLower(m)
	return strings.Contains(m, "embedding") || strings.Contains(m, "embed-") || strings.HasPrefix(m, "bge-") || strings.HasPrefix(m, "e5-")
}

// ProbeChannel is the health probe of an auto-disabled key of a channel:
// one tiny request of the kind the channel serves (ProbeKind), sent with
// that key, no routing, no billing.
func ProbeChannel(ctx context.Context, rl *Relay, c *store.Channel, keyIndex int) error {
	one, err := WithKeyAt(c, keyIndex)
	if err != nil {
		return err
	}
	_, err = TestChannel(ctx, rl, one)
	return err
}

// WithKeyAt is a copy of c that holds only key index of its key list
// (routing.SplitKeys), for a probe or an administrator's test of one key.
func WithKeyAt(c *store.Channel, index int) (*store.Channel, error) {
	keys := routing.SplitKeys(c.Type, c.Key)
	if index < 0 || index >= len(keys) {
		return nil, fmt.Errorf("the channel has no key %d (it has %d)", index, len(keys))
	}
	one := *c
	one.Key = keys[index]
	return &one, nil
}

// TestChannel sends one tiny request through c, of the kind it serves
// (ProbeKind), and reports how long it took. It bypasses routing and
// billing: it checks the channel, not a client's key. c.Key is sent as it
// is: give it one key of a list (WithKeyAt).
func TestChannel(ctx context.Context, rl *Relay, c *store.Channel) (time.Duration, error) {
	if len(c.Models) == 0 {
		return 0, errors.New("the channel lists no models to test with")
	}
	kind := ProbeKind(c)
	model := c.Models[0]
	for _, m := range c.Models {
		if kind == "embeddings" || !isEmbeddingModel(m) {
			model = m
			break
		}
	}
	ch := &routing.Channel{Channel: *c}
	a, t, err := rl.target(ch, model)
	if err != nil {
		return 0, errors.New("task channels are tested by submitting a task")
	}
	if kind == "embeddings" && embedCapable(rl, ch) {
		return testEmbeddings(ctx, rl, ch, model)
	}
	codec := a.Codec(t)
	one := 1
	body, err := codec.EncodeRequest(&ir.Request{Model: t.Model, MaxTokens: &one,
		Messages: []ir.Message{{Role: ir.RoleUser, Parts: []ir.Part{{Kind: ir.PartText, Text: "ping"}}}}})
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, rl.Options.FirstByteTimeout)
	defer cancel()
	req, err := a.Chat(ctx, t, body, false, http.Header{})
	if err != nil {
		return 0, err
	}
	return timeExchange(t.HTTP(), req, codec)
}

// testEmbeddings asks a channel to embed one word.
func testEmbeddings(ctx context.Context, rl *Relay, ch *routing.Channel, model string) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, rl.Options.FirstByteTimeout)
	defer cancel()
	a, t, err := rl.target(ch, model)
	if err != nil {
		return 0, err
	}
	var req *http.Request
	if e := rl.nativeEmbedder(ch); e != nil {
		req, err = e.EmbedRequest(ctx, t, []string{"ping"}, 0)
	} else {
		body, _ := json.Marshal(map[string]any{"model": t.Model, "input": "ping"})
		req, err = rl.endpoint(ctx, t, http.MethodPost, "/v1/embeddings", bytes.NewReader(body), "application/json")
	}
	if err != nil {
		return 0, err
	}
	return timeExchange(t.HTTP(), req, a.Codec(t))
}

// timeExchange sends a test request on the channel's client and turns an
// error answer into the upstream's own message.
func timeExchange(client *http.Client, req *http.Request, codec protocol.UpstreamCodec) (time.Duration, error) {
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return 0, errors.New("the upstream could not be reached: " + unreachableCause(err))
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	elapsed := time.Since(start)
	if resp.StatusCode >= 300 {
		e := codec.DecodeError(resp.StatusCode, raw)
		if e == nil {
			e = &ir.Error{Status: resp.StatusCode, Message: resp.Status}
		}
		return elapsed, errors.New(e.Message)
	}
	return elapsed, nil
}

// ErrNoModelList is a channel whose provider has no model list.
var ErrNoModelList = errors.New("this channel type's provider has no model list; enter the model names")

// UpstreamModels asks c's provider which models its account can use, with
// the channel's first key.
func UpstreamModels(ctx context.Context, rl *Relay, c *store.Channel) ([]string, error) {
	ch := (&routing.Channel{Channel: *c}).WithKey(0)
	a, t, err := rl.target(ch, "")
	if err != nil {
		return nil, ErrNoModelList
	}
	l, ok := a.(upstream.ModelLister)
	if !ok {
		return nil, ErrNoModelList
	}
	return l.ListModels(ctx, t)
}
