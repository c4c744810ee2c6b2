package batch

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/turnpike-gw/turnpike/internal/admission"
	"github.com/turnpike-gw/turnpike/internal/billing"
	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/store"
)

type createRequest struct {
	InputFileID      string          `json:"input_file_id"`
	Endpoint         string          `json:"endpoint"`
	CompletionWindow string          `json:"completion_window"`
	Metadata         json.RawMessage `json:"metadata"`
}

// createBatch validates the whole file, and either records a failed batch
// with its errors (charging nothing) or reserves the whole estimate and
// records a batch the runner takes up.
func (s *Service) createBatch(w http.ResponseWriter, r *http.Request) {
	p, ok := s.bearer(w, r)
	if !ok {
		return
	}
	req, err := readCreate(w, r)
	if err != nil {
		s.fail(w, err)
		return
	}
	if f, err := s.ownFile(r.Context(), p, req.InputFileID); err != nil {
		s.fail(w, err)
		return
	} else if f.Purpose != "batch" {
		s.fail(w, badRequest("invalid_value", "input_file_id", "the input file must be uploaded with purpose batch"))
		return
	}
	now := time.Now()
	b := &store.Batch{PublicID: newID("batch_"), Kind: "openai", UserID: p.UserID, TokenID: p.TokenID, Group: p.Group,
		Endpoint: req.Endpoint, InputFileID: req.InputFileID, CompletionWindow: req.CompletionWindow, Metadata: req.Metadata,
		Mode: modeGateway, CreatedAt: now.Unix(), ExpiresAt: now.Add(24 * time.Hour).Unix()}
	pl, err := s.validate(r.Context(), p, req.InputFileID, req.Endpoint, false, false)
	if err != nil {
		s.fail(w, err)
		return
	}
	if ch := s.providerChannel("openai", p.Group, pl); ch != nil && len(pl.errs) == 0 {
		// The provider discounts its batches: the reservation is sized at
		// the provider batch price.
		if pl, err = s.validate(r.Context(), p, req.InputFileID, req.Endpoint, true, false); err != nil {
			s.fail(w, err)
			return
		}
		b.Mode, b.ChannelID = modeProvider, ch.ID
		b.Upstream, _ = json.Marshal(providerState{KeyIndex: ch.KeyIndex})
	}
	if len(pl.errs) > 0 {
		// A bad file is a batch that failed, as OpenAI answers it: the
		// client learns every bad line from the batch's errors.
		b.Status, b.FailedAt, b.Billed, b.Errors = store.BatchFailed, now.Unix(), true, marshalErrors(pl.errs)
		if err := s.Batches.InsertBatch(r.Context(), b); err != nil {
			s.fail(w, err)
			return
		}
		writeJSON(w, http.StatusOK, toBatchObject(b))
		return
	}
	b.Status, b.InProgressAt, b.Total = store.BatchInProgress, now.Unix(), pl.lines
	if err := s.start(r, w.Header(), b, pl, p.TeamID, p.OrgID); err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, toBatchObject(b))
}

// readCreate reads and checks a create request's body.
func readCreate(w http.ResponseWriter, r *http.Request) (createRequest, error) {
	var req createRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&req); err != nil {
		return req, badRequest("invalid_body", "", "the request body must be a JSON object")
	}
	switch {
	case req.InputFileID == "":
		return req, badRequest("missing_required_parameter", "input_file_id", "input_file_id is required")
	case !endpoints[req.Endpoint]:
		return req, badRequest("invalid_value", "endpoint", "endpoint must be /v1/chat/completions, /v1/embeddings or /v1/responses")
	case req.CompletionWindow != "24h":
		return req, badRequest("invalid_value", "completion_window", "completion_window must be 24h")
	}
	if len(req.Metadata) == 0 || string(req.Metadata) == "null" {
		req.Metadata = nil
		return req, nil
	}
	var m map[string]string
	if json.Unmarshal(req.Metadata, &m) != nil || len(m) > 16 {
		return req, badRequest("invalid_value", "metadata", "metadata must be an object of at most 16 string values")
	}
	return req, nil
}

// start admits the batch as a live call is admitted (§15): the create
// counts against the rate limits of its key, user and group, then takes
// the batch's tickets (period budgets, then the balance) and records the
// batch, which from then on owns them. The tickets are kept (out of the
// billing sweep's reach) and flushed before the record exists, so a batch
// never names a hold whose reservation was not stored; a crash between the
// two leaves kept holds no batch names, which the runner refunds
// (refundOrphans).
func (s *Service) start(r *http.Request, h http.Header, b *store.Batch, pl *plan, team, org int64) error {
	var call admission.Ticket
	if err := s.gate().Limit(r.Context(), &call, pl.principal, pl.firstModel(), h, nil); err != nil {
		return err
	}
	defer call.Release(context0(r))
	acct := billing.Account{UserID: b.UserID, TokenID: b.TokenID, Group: b.Group, TeamID: team, OrgID: org, TeamPays: pl.principal.TeamPays}
	holds, taken, err := s.takeTickets(r.Context(), acct, b.PublicID, pl, h)
	var e *ir.Error
	if errors.As(err, &e) && e.Status == 402 && !pl.exact {
		// The byte bound did not fit: the refusal is decided on the
		// counted figure.
		if pl, err = s.validate(r.Context(), pl.principal, pl.fileID, pl.endpoint, pl.provider, true); err != nil {
			return err
		}
		holds, taken, err = s.takeTickets(r.Context(), acct, b.PublicID, pl, h)
	}
	if err != nil {
		return err
	}
	setHolds(b, holds)
	for _, tk := range taken {
		tk.Keep(nil)
	}
	if err := s.Billing.Writer().Flush(r.Context()); err != nil {
		return err
	}
	if err := s.Batches.InsertBatch(r.Context(), b); err != nil {
		for _, tk := range taken {
			_, _ = tk.RefundNow(context0(r), nil)
		}
		return err
	}
	s.runner.poke()
	return nil
}

// ownBatch finds a batch of p's user of kind; another user's is not found.
func (s *Service) ownBatch(r *http.Request, userID int64, kind, id string) (*store.Batch, error) {
	b, err := s.Batches.GetBatch(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && (b.UserID != userID || b.Kind != kind)) {
		return nil, notFound("batch", id)
	}
	return b, err
}

func (s *Service) getBatch(w http.ResponseWriter, r *http.Request) {
	p, ok := s.bearer(w, r)
	if !ok {
		return
	}
	b, err := s.ownBatch(r, p.UserID, "openai", r.PathValue("id"))
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, toBatchObject(b))
}

func (s *Service) listBatches(w http.ResponseWriter, r *http.Request) {
	p, ok := s.bearer(w, r)
	if !ok {
		return
	}
	limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
	if limit <= 0 || limit > 100 {
		limit = 20
	}
	bs, err := s.Batches.ListBatches(r.Context(), p.UserID, "openai", r.URL.Query().Get("after"), limit+1)
	if err != nil {
		s.fail(w, err)
		return
	}
	more := len(bs) > limit
	if more {
		bs = bs[:limit]
	}
	data := make([]batchObject, 0, len(bs))
	for _, b := range bs {
		data = append(data, toBatchObject(b))
	}
	out := map[string]any{"object": "list", "data": data, "has_more": more, "first_id": nil, "last_id": nil}
	if len(data) > 0 {
		out["first_id"], out["last_id"] = data[0].ID, data[len(data)-1].ID
	}
	writeJSON(w, http.StatusOK, out)
}

// cancelBatch asks the runner to stop: lines under way finish, no new one
// starts, and the batch ends cancelled with what it did billed.
func (s *Service) cancelBatch(w http.ResponseWriter, r *http.Request) {
	p, ok := s.bearer(w, r)
	if !ok {
		return
	}
	b, err := s.ownBatch(r, p.UserID, "openai", r.PathValue("id"))
	if err != nil {
		s.fail(w, err)
		return
	}
	b, err = s.cancel(r, b)
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, toBatchObject(b))
}

func (s *Service) cancel(r *http.Request, b *store.Batch) (*store.Batch, error) {
	ok, err := s.Batches.MoveBatch(r.Context(), b.ID, []string{store.BatchValidating, store.BatchInProgress}, store.BatchCancelling, time.Now().Unix())
	if err != nil {
		return nil, err
	}
	if b, err = s.Batches.GetBatch(r.Context(), b.PublicID); err != nil {
		return nil, err
	}
	if !ok && b.Status != store.BatchCancelling && b.Status != store.BatchCancelled {
		return nil, &ir.Error{Status: 409, Kind: ir.KindInvalidRequest, Code: "batch_not_cancellable",
			Message: "a batch that is " + b.Status + " cannot be cancelled"}
	}
	s.runner.stop(b.ID)
	s.runner.poke()
	return b, nil
}
