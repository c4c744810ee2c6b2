package batch

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/turnpike-gw/turnpike/internal/routing"
	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/upstream"
)

// providerChannel is the channel a batch of one model goes to as a
// provider batch: the key its session is pinned to, else the first the
// routing snapshot would try for the model under its strategy, with one of
// its usable keys, when its provider runs batches of kind. Nil runs the lines in the gateway (several models, or
// a provider without a batch API).
func (s *Service) providerChannel(kind, group string, pl *plan) *routing.Channel {
	if len(pl.models) != 1 {
		return nil
	}
	model := pl.sortedModels()[0]
	o := routing.PlanOptions{Group: group, Model: model, Max: 1}
	if price, err := s.Billing.Price(model); err == nil {
		o = routing.OptionsFor(o, &price.Raw)
	}
	// Reading the session's line is bounded: the create waits on it.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if ch := s.pinnedProvider(ctx, kind, pl, o); ch != nil {
		return ch
	}
	plan := s.Router.Table().PlanWith(s.Router.Health, o)
	if len(plan) == 0 {
		return nil
	}
	ch, ok := s.Router.Health.Pick(plan[0])
	if !ok || s.providerOn(ch, model, kind) == nil {
		return nil
	}
	return ch
}

// providerState is a provider batch's progress, kept in the batch record
// (Upstream) so that any node carries it on after a restart.
type providerState struct {
	KeyIndex   int    `json:"key_index"`
	FileID     string `json:"file_id,omitempty"`
	BatchID    string `json:"batch_id,omitempty"`
	Status     string `json:"status,omitempty"`
	CancelSent bool   `json:"cancel_sent,omitempty"`
}

// provider is one channel key's batch API: the adapter capability that
// builds its requests and reads its answers, and the target they are
// built for.
type provider struct {
	ch  *routing.Channel
	a   upstream.Adapter
	api upstream.Batches
	t   upstream.Target
}

// providerOn is ch's batch API for a batch of model in kind's form; nil
// when the channel's provider runs no such batches.
func (s *Service) providerOn(ch *routing.Channel, model, kind string) *provider {
	find := s.Adapters
	if find == nil {
		find = upstream.Builtin
	}
	a, ok := find(ch.Type)
	if !ok {
		return nil
	}
	api, ok := a.(upstream.Batches)
	if !ok {
		return nil
	}
	t := upstream.Target{Type: ch.Type, BaseURL: ch.BaseURL, Key: ch.Key, Settings: ch.Settings,
		Model: ch.MapModel(model), Client: s.client()}
	if n, ok := a.(upstream.ModelNamer); ok {
		t.Model = n.UpstreamModel(t)
	}
	want := upstream.BatchOpenAI
	if kind == kindMessages {
		want = upstream.BatchMessages
	}
	if api.BatchForm(t) != want {
		return nil
	}
	return &provider{ch: ch, a: a, api: api, t: t}
}

// do sends one request of the provider's batch API and reports its
// outcome to channel health, judged under the channel's policy exactly as
// a live attempt's (retry_statuses, disable_statuses, Retry-After). A
// non-2xx answer is the provider's error; the caller closes a 2xx body.
func (s *Service) do(ctx context.Context, p *provider, req *http.Request, err error) (*http.Response, error) {
	if err != nil {
		return nil, err // the adapter could not build it: nothing was sent
	}
	resp, err := upstream.NoRedirects(s.client()).Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err() // this process stopping is not the channel's failure
		}
		e := upstream.Unreachable(err)
		s.Router.Health.Report(p.ch, p.ch.KeyIndex, e)
		return nil, fmt.Errorf("%s %s: %w", req.Method, req.URL.Path, e)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		defer resp.Body.Close()
		e := upstream.AnswerError(p.a, p.t, resp)
		e.Message = p.ch.Redact(e.Message)
		s.Router.Health.Report(p.ch, p.ch.KeyIndex, e)
		return nil, fmt.Errorf("%s %s answered %d: %w", req.Method, req.URL.Path, resp.StatusCode, e)
	}
	s.Router.Health.SucceededKey(p.ch, p.ch.KeyIndex)
	return resp, nil
}

// call is do for an answer read whole (bounded).
func (s *Service) call(ctx context.Context, p *provider, req *http.Request, err error) ([]byte, error) {
	resp, err := s.do(ctx, p, req, err)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return io.ReadAll(io.LimitReader(resp.Body, 1<<20))
}

// created is call for an upload or create, answering the id of what the
// provider created.
func (s *Service) created(ctx context.Context, p *provider, what string, req *http.Request, err error) (string, error) {
	raw, err := s.call(ctx, p, req, err)
	if err != nil {
		return "", err
	}
	if id := upstream.CreatedID(raw); id != "" {
		return id, nil
	}
	return "", fmt.Errorf("the provider's %s answered no id", what)
}

func (s *Service) client() *http.Client {
	if s.Client != nil {
		return s.Client
	}
	return http.DefaultClient
}

// pollProvider carries a provider batch one step: upload the input where
// the provider takes a file, create the provider batch, poll it, and once
// it ended collect its results as line outcomes. It reports whether the
// batch is ready to be finished.
func (s *Service) pollProvider(ctx context.Context, b *store.Batch) bool {
	var st providerState
	_ = json.Unmarshal(b.Upstream, &st)
	base := s.Router.Table().Channel(b.ChannelID)
	var p *provider
	if base != nil {
		s.repick(base, &st)
		p = s.providerOn(base.WithKey(st.KeyIndex), modelOf(b), b.Kind)
	}
	if p == nil {
		if time.Now().Unix() > b.ExpiresAt {
			return true // past its window with no channel to ask: it ends expired
		}
		s.later(ctx, b, st, "the batch's channel is gone or runs no batches")
		return false
	}
	lines := upstream.BatchLines(func(each func([]byte) error) error {
		return s.eachLine(ctx, b.InputFileID, func(_ int, raw []byte) error {
			return each(capInputLine(b.Endpoint, raw, s.Options.DefaultCompletionTokens))
		})
	})
	var err error
	switch {
	case st.FileID == "" && st.BatchID == "":
		req, rerr := p.api.UploadBatchInput(ctx, p.t, lines)
		if req == nil && rerr == nil {
			st.BatchID, err = s.createUpstream(ctx, p, b, "", lines) // the create takes the input
			break
		}
		if st.FileID, err = s.created(ctx, p, "file upload", req, rerr); err == nil {
			err = s.saveState(ctx, b, st)
		}
		if err == nil {
			st.BatchID, err = s.createUpstream(ctx, p, b, st.FileID, nil)
		}
	case st.BatchID == "":
		st.BatchID, err = s.createUpstream(ctx, p, b, st.FileID, nil)
	default:
		var done bool
		done, err = s.pollUpstream(ctx, b, &st, p)
		if err == nil && done {
			return true
		}
	}
	s.laterAfter(ctx, b, st, err)
	return false
}

// repick moves a batch that has nothing at its provider yet off a key
// channel health took out (its upload refused, say) onto a usable one.
// Once a file or batch exists it belongs to the key's account, so the
// key stays.
func (s *Service) repick(base *routing.Channel, st *providerState) {
	if st.FileID != "" || st.BatchID != "" || s.Router.Health.Routable(base.ID, st.KeyIndex) {
		return
	}
	if ch, ok := s.Router.Health.Pick(base); ok {
		st.KeyIndex = ch.KeyIndex
	}
}

// createUpstream creates the provider batch from the uploaded file, or
// from the lines where the provider takes them with the create; the
// batch's session is then pinned to the key that holds it.
func (s *Service) createUpstream(ctx context.Context, p *provider, b *store.Batch, fileID string, lines upstream.BatchLines) (string, error) {
	req, err := p.api.CreateBatch(ctx, p.t, b.Endpoint, fileID, lines)
	id, err := s.created(ctx, p, "batch create", req, err)
	if err == nil {
		s.pinBatch(ctx, b, p.ch)
	}
	return id, err
}

// laterAfter is later for a step that ended with err (nil: it went well).
func (s *Service) laterAfter(ctx context.Context, b *store.Batch, st providerState, err error) {
	why := ""
	if err != nil {
		why = err.Error()
	}
	s.later(ctx, b, st, why)
}

// later saves the state and schedules the next poll.
func (s *Service) later(ctx context.Context, b *store.Batch, st providerState, why string) {
	if why != "" {
		s.Logger.Warn("provider batch step failed; retried at the next poll", "batch", b.PublicID, "err", why)
	}
	b.NextPollAt = time.Now().Add(s.Options.PollInterval).UnixMilli()
	_ = s.saveState(ctx, b, st)
}

func (s *Service) saveState(ctx context.Context, b *store.Batch, st providerState) error {
	b.Upstream, _ = json.Marshal(st)
	ok, err := s.Batches.SaveBatch(ctx, b)
	if err != nil || ok {
		return err
	}
	// Cancelled meanwhile: the provider's ids must be kept all the same,
	// or the next poll would create a second provider batch.
	cur, err := s.Batches.GetBatch(ctx, b.PublicID)
	if err != nil {
		return err
	}
	b.Status = cur.Status
	_, err = s.Batches.SaveBatch(ctx, b)
	return err
}

// modelOf is the model of a single-model batch (a provider batch).
func modelOf(b *store.Batch) string {
	if hs := holdsOf(b); len(hs) > 0 {
		return hs[0].Model
	}
	return ""
}
