package relay

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/upstream"
)

// TestChannel sends one tiny chat request through c and reports how long it
// took. It bypasses routing and billing: it checks the channel, not a key.
func TestChannel(ctx context.Context, rl *Relay, c *store.Channel) (time.Duration, error) {
	if len(c.Models) == 0 {
		return 0, errors.New("the channel lists no models to test with")
	}
	if upstream.IsTaskOnly(c.Type) {
		return 0, errors.New("task channels are tested by submitting a task")
	}
	model := c.Models[0]
	if m, ok := c.ModelMapping[model]; ok && m != "" {
		model = m
	}
	codec := rl.Codecs[upstream.FormatOf(c.Type)]
	one := 1
	body, err := codec.EncodeRequest(&ir.Request{Model: model, MaxTokens: &one,
		Messages: []ir.Message{{Role: ir.RoleUser, Parts: []ir.Part{{Kind: ir.PartText, Text: "ping"}}}}})
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, rl.Options.FirstByteTimeout)
	defer cancel()
	t := upstream.Target{Type: c.Type, BaseURL: c.BaseURL, Key: c.Key, Settings: c.Settings, Model: model}
	req, err := upstream.Chat(ctx, t, body, false, nil)
	if err != nil {
		return 0, err
	}
	start := time.Now()
	resp, err := rl.Client.Do(req)
	if err != nil {
		return 0, errors.New("the upstream could not be reached")
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
