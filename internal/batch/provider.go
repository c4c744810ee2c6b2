package batch

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/turnpike-gw/turnpike/internal/billing"
	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/routing"
	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/upstream"
)

// otherWires are the channel types that do not speak the OpenAI wire, so
// settings.batches cannot make them take an OpenAI-form batch.
var otherWires = map[int]bool{upstream.TypeAnthropic: true, upstream.TypeGemini: true, upstream.TypeVertex: true,
	33 /* aws */ : true, 34 /* cohere */ : true}

// batchCapable reports whether a channel's provider runs batches of kind:
// for the OpenAI form, OpenAI and Azure do and any OpenAI-compatible
// channel may say so with settings.batches: true; for Message Batches, a
// messages-wire channel with settings.batches: true.
func batchCapable(ch *routing.Channel, kind string) bool {
	v, set := ch.Settings["batches"].(bool)
	if kind == kindMessages {
		return ch.Type == upstream.TypeAnthropic && v
	}
	if set {
		return v && !otherWires[ch.Type]
	}
	return ch.Type == upstream.TypeOpenAI || ch.Type == upstream.TypeAzure
}

// providerChannel is the channel a batch of one model goes to as a
// provider batch: the first the routing snapshot would try for the
// model, when its provider runs batches. Nil runs the lines in the
// gateway (several models, or a provider without a batch API).
func (s *Service) providerChannel(kind, group string, pl *plan) *routing.Channel {
	if len(pl.models) != 1 {
		return nil
	}
	model := pl.sortedModels()[0]
	plan := s.Router.Table().Plan(s.Router.Health, group, model, 1, nil)
	if len(plan) == 0 || !batchCapable(plan[0], kind) {
		return nil
	}
	return plan[0]
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

// providerWire is how to reach a channel's files and batches API.
type providerWire struct {
	base, prefix string
	azure        bool
	messages     bool
	apiVersion   string
	key          string
	headers      map[string]string
}

func wireFor(ch *routing.Channel, keyIndex int) providerWire {
	w := providerWire{base: strings.TrimSuffix(strings.TrimRight(ch.BaseURL, "/"), "/v1"), prefix: "/v1"}
	switch {
	case ch.Type == upstream.TypeAnthropic:
		w.messages = true
		if w.base == "" {
			w.base = "https://api.anthropic.com"
		}
	case w.base == "":
		w.base = "https://api.openai.com"
	}
	if p, ok := ch.Settings["path_prefix"].(string); ok && p != "" {
		w.prefix = "/" + strings.Trim(p, "/")
	}
	if ch.Type == upstream.TypeAzure {
		w.azure, w.apiVersion = true, "2024-10-21"
		if v, ok := ch.Settings["api_version"].(string); ok && v != "" {
			w.apiVersion = v
		}
	}
	keys := ch.Keys()
	if keyIndex >= 0 && keyIndex < len(keys) {
		w.key = keys[keyIndex]
	}
	if hs, ok := ch.Settings["headers"].(map[string]any); ok {
		w.headers = map[string]string{}
		for k, v := range hs {
			if s, ok := v.(string); ok {
				w.headers[k] = s
			}
		}
	}
	return w
}

// endpoint is a batch endpoint as the provider names it: Azure's
// deployment API names it without the version ("/chat/completions").
func (w providerWire) endpoint(e string) string {
	if w.azure && w.apiVersion != "v1" {
		return strings.TrimPrefix(e, "/v1")
	}
	return e
}

// upstreamLine is an input line as the channel takes it: the model mapped
// (on Azure, to its deployment) and the url named as the provider names
// the endpoint.
func (w providerWire) upstreamLine(ch *routing.Channel, raw []byte) []byte {
	m := gjson.GetBytes(raw, "body.model").String()
	up := ch.MapModel(m)
	if w.azure {
		if ds, ok := ch.Settings["deployments"].(map[string]any); ok {
			if d, ok := ds[up].(string); ok && d != "" {
				up = d
			}
		}
		raw, _ = sjson.SetBytes(raw, "url", w.endpoint(gjson.GetBytes(raw, "url").String()))
	}
	if up != m {
		raw, _ = sjson.SetBytes(raw, "body.model", up)
	}
	return raw
}

func (w providerWire) url(path string) string {
	if !w.azure {
		return w.base + w.prefix + path
	}
	if w.apiVersion == "v1" {
		return w.base + "/openai/v1" + path
	}
	return w.base + "/openai" + path + "?api-version=" + url.QueryEscape(w.apiVersion)
}

func (w providerWire) request(ctx context.Context, method, path string, body io.Reader) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, w.url(path), body)
	if err != nil {
		return nil, err
	}
	for k, v := range w.headers {
		req.Header.Set(k, v)
	}
	switch {
	case w.messages:
		req.Header.Set("x-api-key", w.key)
		req.Header.Set("anthropic-version", "2023-06-01")
	case w.azure:
		req.Header.Set("api-key", w.key)
	default:
		req.Header.Set("Authorization", "Bearer "+w.key)
	}
	return req, nil
}

// call sends a request and reads a JSON answer; a non-2xx answer is an
// error naming the status, never the key.
func (s *Service) call(req *http.Request) ([]byte, error) {
	resp, err := s.client().Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", req.Method, req.URL.Path, errorsCause(err))
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, fmt.Errorf("%s %s answered %d: %s", req.Method, req.URL.Path, resp.StatusCode, gjson.GetBytes(raw, "error.message").String())
	}
	return raw, nil
}

// errorsCause drops the URL from a transport error: a query may carry a
// credential on some providers.
func errorsCause(err error) error {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err
	}
	return err
}

func (s *Service) client() *http.Client {
	if s.Client != nil {
		return s.Client
	}
	return http.DefaultClient
}

// pollProvider carries a provider batch one step: upload the input (the
// model names mapped for the channel), create the provider batch, poll it,
// and once it ended collect its output and error files as line outcomes.
// It reports whether the batch is ready to be finished.
func (s *Service) pollProvider(ctx context.Context, b *store.Batch) bool {
	var st providerState
	_ = json.Unmarshal(b.Upstream, &st)
	ch := s.Router.Table().Channel(b.ChannelID)
	if ch == nil {
		if time.Now().Unix() > b.ExpiresAt {
			return true // past its window with no channel to ask: it ends expired
		}
		s.later(ctx, b, st, "the batch's channel is gone")
		return false
	}
	w := wireFor(ch, st.KeyIndex)
	if b.Kind == kindMessages {
		return s.pollMessagesProvider(ctx, b, st, ch, w)
	}
	var err error
	switch {
	case st.FileID == "":
		st.FileID, err = s.uploadInput(ctx, b, ch, w)
		if err == nil {
			err = s.saveState(ctx, b, st)
		}
		if err == nil {
			st.BatchID, err = s.createUpstream(ctx, b, st, w)
		}
	case st.BatchID == "":
		st.BatchID, err = s.createUpstream(ctx, b, st, w)
	default:
		var done bool
		done, err = s.pollUpstream(ctx, b, &st, ch, w)
		if err == nil && done {
			return true
		}
	}
	s.laterAfter(ctx, b, st, err)
	return false
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

// uploadInput streams the input file to the provider's files API with the
// models mapped as the channel maps them.
func (s *Service) uploadInput(ctx context.Context, b *store.Batch, ch *routing.Channel, w providerWire) (string, error) {
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		err := func() error {
			if err := mw.WriteField("purpose", "batch"); err != nil {
				return err
			}
			fw, err := mw.CreateFormFile("file", b.PublicID+".jsonl")
			if err != nil {
				return err
			}
			err = s.eachLine(ctx, b.InputFileID, func(_ int, raw []byte) error {
				raw = w.upstreamLine(ch, capInputLine(b.Endpoint, raw, s.Options.DefaultCompletionTokens))
				if _, err := fw.Write(raw); err != nil {
					return err
				}
				_, err := fw.Write([]byte{'\n'})
				return err
			})
			if err != nil {
				return err
			}
			return mw.Close()
		}()
		pw.CloseWithError(err)
	}()
	return s.postStreamed(ctx, w, "/files", mw.FormDataContentType(), pr, "file upload")
}

// postStreamed posts the body a writer goroutine produces into pr and
// answers the id the provider gave what it created (what names it in
// errors). The pipe is closed on every way out, so the writer never
// blocks on a request that was not sent.
func (s *Service) postStreamed(ctx context.Context, w providerWire, path, contentType string, pr *io.PipeReader, what string) (string, error) {
	req, err := w.request(ctx, http.MethodPost, path, pr)
	if err != nil {
		pr.Close()
		return "", err
	}
	req.Header.Set("Content-Type", contentType)
	raw, err := s.call(req)
	pr.CloseWithError(io.ErrClosedPipe)
	if err != nil {
		return "", err
	}
	id := gjson.GetBytes(raw, "id").String()
	if id == "" {
		return "", fmt.Errorf("the provider's %s answered no id", what)
	}
	return id, nil
}

func (s *Service) createUpstream(ctx context.Context, b *store.Batch, st providerState, w providerWire) (string, error) {
	body, _ := json.Marshal(map[string]any{"input_file_id": st.FileID, "endpoint": w.endpoint(b.Endpoint), "completion_window": "24h"})
	req, err := w.request(ctx, http.MethodPost, "/batches", strings.NewReader(string(body)))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	raw, err := s.call(req)
	if err != nil {
		return "", err
	}
	id := gjson.GetBytes(raw, "id").String()
	if id == "" {
		return "", fmt.Errorf("the provider's batch create answered no id")
	}
	return id, nil
}

// pollUpstream asks the provider how the batch is doing; a cancel asked of
// the gateway is passed on once. When the provider's batch ended, its
// output and error files are read into line outcomes (true).
func (s *Service) pollUpstream(ctx context.Context, b *store.Batch, st *providerState, ch *routing.Channel, w providerWire) (bool, error) {
	if b.Status == store.BatchCancelling && !st.CancelSent {
		req, err := w.request(ctx, http.MethodPost, "/batches/"+url.PathEscape(st.BatchID)+"/cancel", nil)
		if err != nil {
			return false, err
		}
		if _, err := s.call(req); err != nil {
			return false, err
		}
		st.CancelSent = true
	}
	req, err := w.request(ctx, http.MethodGet, "/batches/"+url.PathEscape(st.BatchID), nil)
	if err != nil {
		return false, err
	}
	raw, err := s.call(req)
	if err != nil {
		return false, err
	}
	up := gjson.ParseBytes(raw)
	st.Status = up.Get("status").String()
	if !terminal(st.Status) {
		b.Completed, b.Failed = int(up.Get("request_counts.completed").Int()), int(up.Get("request_counts.failed").Int())
		return false, nil
	}
	if st.Status == store.BatchFailed && up.Get("errors").IsObject() {
		b.Errors = json.RawMessage(up.Get("errors").Raw) // the provider's validation, line numbers and all
	}
	if err := s.saveState(ctx, b, *st); err != nil {
		return false, err
	}
	lines, price, err := s.providerResultsBasis(ctx, b)
	if err != nil {
		return false, err
	}
	for _, f := range []string{up.Get("output_file_id").String(), up.Get("error_file_id").String()} {
		if f == "" {
			continue
		}
		if err := s.collect(ctx, b, w, f, lines, price); err != nil {
			return false, err
		}
	}
	return true, nil
}

// providerResultsBasis is what reading a provider batch's results needs:
// the input's line numbers by custom id, and the batch price the lines are
// charged at (of the version in effect when the batch was admitted).
func (s *Service) providerResultsBasis(ctx context.Context, b *store.Batch) (map[string]int, *billing.Price, error) {
	lines, err := s.customIDs(ctx, b)
	if err != nil {
		return nil, nil, err
	}
	price, err := s.Billing.PriceAt(modelOf(b), admittedAt(b))
	if err != nil {
		return nil, nil, err
	}
	return lines, billing.BatchPrice(price, true), nil
}

// customIDs maps the input's custom ids to their line numbers.
func (s *Service) customIDs(ctx context.Context, b *store.Batch) (map[string]int, error) {
	out := map[string]int{}
	err := s.eachLine(ctx, b.InputFileID, func(n int, raw []byte) error {
		out[gjson.GetBytes(raw, "custom_id").String()] = n
		return nil
	})
	return out, err
}

// collect reads a provider result file line by line into outcomes, each
// successful one priced at the batch price from the usage it reports.
func (s *Service) collect(ctx context.Context, b *store.Batch, w providerWire, fileID string, lines map[string]int, price *billing.Price) error {
	req, err := w.request(ctx, http.MethodGet, "/files/"+url.PathEscape(fileID)+"/content", nil)
	if err != nil {
		return err
	}
	resp, err := s.client().Do(req)
	if err != nil {
		return errorsCause(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("the provider's result file answered %d", resp.StatusCode)
	}
	model := modelOf(b)
	return readLines(resp.Body, func(raw []byte) error {
		l := gjson.ParseBytes(raw)
		n, ok := lines[l.Get("custom_id").String()]
		if !ok {
			return nil
		}
		out := &store.BatchLine{BatchID: b.ID, Line: n, CustomID: l.Get("custom_id").String(), Model: model,
			Status: int(l.Get("response.status_code").Int()), Body: l.Get("response.body").Raw}
		if out.Body == "" {
			out.Body = l.Get("error").Raw
		}
		if out.Status >= 200 && out.Status < 300 {
			u := usageOf(l.Get("response.body.usage"))
			q, err := s.gate().Quota(price, u, price.CallCost(1), b.Group)
			if err != nil {
				return err
			}
			out.OK, out.InputTokens, out.OutputTokens, out.Quota = true, u.InputTokens, u.OutputTokens, q
			out.Cost = price.Cost(u, price.CallCost(1)).RatString()
		}
		_, err := s.Batches.PutLine(ctx, out)
		return err
	})
}

// modelOf is the model of a single-model batch (a provider batch).
func modelOf(b *store.Batch) string {
	if hs := holdsOf(b); len(hs) > 0 {
		return hs[0].Model
	}
	return ""
}

// usageOf reads the usage of a chat, embeddings or responses answer.
func usageOf(u gjson.Result) ir.Usage {
	in := u.Get("prompt_tokens")
	if !in.Exists() {
		in = u.Get("input_tokens")
	}
	out := u.Get("completion_tokens")
	if !out.Exists() {
		out = u.Get("output_tokens")
	}
	cached := u.Get("prompt_tokens_details.cached_tokens")
	if !cached.Exists() {
		cached = u.Get("input_tokens_details.cached_tokens")
	}
	return ir.Usage{InputTokens: int(in.Int()), OutputTokens: int(out.Int()), CacheReadTokens: int(cached.Int())}.NonNegative()
}
