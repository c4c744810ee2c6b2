package batch

import (
	"context"
	"time"

	"github.com/tidwall/gjson"

	"github.com/turnpike-gw/turnpike/internal/routing"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// batchSession is a provider batch's cache affinity session (CONTRACT
// §14), as a chat call's: the explicit session its first line names
// (prompt_cache_key, metadata.user_id, user), its user's own, for its
// model. ok is false when the line names none, the model has affinity off
// or the gateway keeps no pins. A batch has no one prompt prefix to stand
// for a session.
func (s *Service) batchSession(ctx context.Context, fileID, group string, userID int64, model string) (key routing.Session, ttl time.Duration, ok bool) {
	if s.Router.Pins == nil {
		return key, 0, false
	}
	price, err := s.Billing.Price(model)
	if err != nil {
		return key, 0, false
	}
	if ttl = routing.AffinityOf(&price.Raw); ttl <= 0 {
		return key, 0, false
	}
	var src routing.SessionSources
	_ = s.eachLine(ctx, fileID, func(_ int, raw []byte) error {
		b := gjson.GetBytes(raw, "body")
		src.PromptCacheKey, src.User = b.Get("prompt_cache_key").String(), b.Get("user").String()
		src.MetadataUserID = b.Get("metadata.user_id").String()
		return errStop
	})
	if id, _ := src.First(); id == "" {
		return key, 0, false
	}
	return routing.SessionKey(userID, group, model, src, nil), ttl, true
}

// pinnedProvider is the key the batch's session is pinned to, when it is
// healthy, routed for the batch and its provider runs batches of kind.
func (s *Service) pinnedProvider(ctx context.Context, kind string, pl *plan, o routing.PlanOptions) *routing.Channel {
	if pl.principal == nil {
		return nil
	}
	key, ttl, ok := s.batchSession(ctx, pl.fileID, o.Group, pl.principal.UserID, o.Model)
	if !ok {
		return nil
	}
	pin, found, err := s.Router.Pins.Get(ctx, key, ttl)
	if err != nil || !found {
		return nil
	}
	ch, ok := s.Router.Table().Pinned(s.Router.Health, o, pin)
	if !ok || s.providerOn(ch, o.Model, kind) == nil {
		return nil
	}
	return ch
}

// pinBatch pins the batch's session to the key its provider batch was
// created with, as a chat call pins the key that answered it.
func (s *Service) pinBatch(ctx context.Context, b *store.Batch, ch *routing.Channel) {
	key, ttl, ok := s.batchSession(ctx, b.InputFileID, b.Group, b.UserID, modelOf(b))
	if !ok {
		return
	}
	if err := s.Router.Pins.Set(ctx, key, routing.Pin{ChannelID: ch.ID, KeyIndex: ch.KeyIndex}, ttl); err != nil {
		s.Logger.Warn("cache affinity pin store failed; the batch is not pinned", "batch", b.PublicID, "err", err)
	}
}
