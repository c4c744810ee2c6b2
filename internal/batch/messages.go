package batch

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// The messages-native Message Batches run on the same machinery as the
// OpenAI form: the requests become an input file of /v1/messages lines,
// validated, reserved and run (or collected) the same way; only the wire
// objects differ.

const kindMessages = "messages"

// maxMessageRequests is the Message Batches API's own bound on one batch.
const maxMessageRequests = 100_000

func (s *Service) registerMessages(mux *http.ServeMux) {
	mux.HandleFunc("POST /v1/messages/batches", s.createMessageBatch)
	mux.HandleFunc("GET /v1/messages/batches", s.listMessageBatches)
	mux.HandleFunc("GET /v1/messages/batches/{id}", s.getMessageBatch)
	mux.HandleFunc("GET /v1/messages/batches/{id}/results", s.messageBatchResults)
	mux.HandleFunc("POST /v1/messages/batches/{id}/cancel", s.cancelMessageBatch)
}

// messagesKey takes the key as x-api-key or Bearer, as /v1/messages does.
func (s *Service) messagesPrincipal(w http.ResponseWriter, r *http.Request) (*auth.Principal, bool) {
	key := r.Header.Get("x-api-key")
	if key == "" {
		key = auth.BearerToken(r)
	}
	p, err := s.Keys.Authenticate(r.Context(), key)
	if err != nil {
		writeErr(w, s.Messages, err)
		return nil, false
	}
	return p, true
}

// messageBatchObject is the Message Batches API's batch object.
type messageBatchObject struct {
	ID                string        `json:"id"`
	Type              string        `json:"type"`
	ProcessingStatus  string        `json:"processing_status"`
	RequestCounts     messageCounts `json:"request_counts"`
	EndedAt           *string       `json:"ended_at"`
	CreatedAt         string        `json:"created_at"`
	ExpiresAt         string        `json:"expires_at"`
	ArchivedAt        *string       `json:"archived_at"`
	CancelInitiatedAt *string       `json:"cancel_initiated_at"`
	ResultsURL        *string       `json:"results_url"`
}

type messageCounts struct {
	Processing int `json:"processing"`
	Succeeded  int `json:"succeeded"`
	Errored    int `json:"errored"`
	Canceled   int `json:"canceled"`
	Expired    int `json:"expired"`
}

func rfc3339(sec int64) string { return time.Unix(sec, 0).UTC().Format(time.RFC3339) }

func optRFC3339(sec int64) *string {
	if sec == 0 {
		return nil
	}
	v := rfc3339(sec)
	return &v
}

func (s *Service) toMessageBatch(r *http.Request, b *store.Batch) messageBatchObject {
	o := messageBatchObject{ID: b.PublicID, Type: "message_batch", CreatedAt: rfc3339(b.CreatedAt), ExpiresAt: rfc3339(b.ExpiresAt),
		CancelInitiatedAt: optRFC3339(b.CancellingAt)}
	unrun := b.Total - b.Completed - b.Failed
	o.RequestCounts = messageCounts{Succeeded: b.Completed, Errored: b.Failed}
	switch {
	case terminal(b.Status):
		o.ProcessingStatus = "ended"
		ended := max(b.CompletedAt, b.FailedAt, b.ExpiredAt, b.CancelledAt)
		o.EndedAt = optRFC3339(ended)
		url := s.baseURL(r) + "/v1/messages/batches/" + b.PublicID + "/results"
		o.ResultsURL = &url
		if b.Status == store.BatchExpired {
			o.RequestCounts.Expired = unrun
		} else {
			o.RequestCounts.Canceled = unrun
		}
	case b.Status == store.BatchCancelling:
		o.ProcessingStatus, o.RequestCounts.Processing = "canceling", unrun
	default:
		o.ProcessingStatus, o.RequestCounts.Processing = "in_progress", unrun
	}
	return o
}

// createMessageBatch turns the requests into an input file of /v1/messages
// lines and starts a batch of them. Unlike the OpenAI form, a bad request
// refuses the whole call with 400, as the Message Batches API does.
func (s *Service) createMessageBatch(w http.ResponseWriter, r *http.Request) {
	p, ok := s.messagesPrincipal(w, r)
	if !ok {
		return
	}
	fail := func(err error) { writeErr(w, s.Messages, err) }
	raw, err := readBody(w, r, s.Options.BodyLimit)
	if err != nil {
		fail(err)
		return
	}
	input, err := messageLines(raw)
	if err != nil {
		fail(err)
		return
	}
	f, err := s.putFile(r.Context(), p.UserID, "message_batch.jsonl", "message_batch", input)
	if err != nil {
		fail(err)
		return
	}
	pl, err := s.validate(r.Context(), p, f.PublicID, "/v1/messages", false, false)
	if err == nil && len(pl.errs) > 0 {
		e := pl.errs[0]
		err = badRequest(e.Code, "requests", "requests["+strconv.Itoa(e.Line-1)+"]: "+e.Message)
	}
	if err != nil {
		s.dropFile(r, f.PublicID)
		fail(err)
		return
	}
	now := time.Now()
	b := &store.Batch{PublicID: newID("msgbatch_"), Kind: kindMessages, UserID: p.UserID, TokenID: p.TokenID, Group: p.Group,
		Endpoint: "/v1/messages", InputFileID: f.PublicID, CompletionWindow: "24h", Mode: modeGateway,
		Status: store.BatchInProgress, Total: pl.lines, CreatedAt: now.Unix(), InProgressAt: now.Unix(),
		ExpiresAt: now.Add(24 * time.Hour).Unix()}
	if ch := s.providerChannel(kindMessages, p.Group, pl); ch != nil {
		if pl, err = s.validate(r.Context(), p, f.PublicID, "/v1/messages", true, false); err != nil {
			s.dropFile(r, f.PublicID)
			fail(err)
			return
		}
		b.Mode, b.ChannelID = modeProvider, ch.ID
		b.Upstream, _ = json.Marshal(providerState{KeyIndex: ch.KeyIndex})
	}
	if err := s.start(r, w.Header(), b, pl, p.TeamID, p.OrgID); err != nil {
		s.dropFile(r, f.PublicID)
		fail(err)
		return
	}
	writeJSON(w, http.StatusOK, s.toMessageBatch(r, b))
}

// messageLines is a Message Batch's requests as input file lines, in one
// pass over them: the body was checked to be JSON once, and each
// request's custom_id and params are copied as they came (the lines are
// checked again, one by one, as any batch file is).
func messageLines(raw []byte) (*bytes.Buffer, error) {
	// A request's params become a line as they are, so a member named
	// twice anywhere is refused here, naming where (CONTRACT §13).
	valid, dup := protocol.CheckMembers(raw)
	if dup != nil {
		return nil, dup
	}
	reqs := gjson.GetBytes(raw, "requests")
	if !valid || !reqs.IsArray() {
		return nil, badRequest("invalid_request", "requests", "requests must be a non-empty array of {custom_id, params}")
	}
	var input bytes.Buffer
	input.Grow(len(reqs.Raw) + 64)
	n := 0
	reqs.ForEach(func(_, q gjson.Result) bool {
		if n++; n > maxMessageRequests {
			return false
		}
		input.WriteString(`{"custom_id":`)
		writeOneLine(&input, q.Get("custom_id").Raw)
		input.WriteString(`,"method":"POST","url":"/v1/messages","body":`)
		writeOneLine(&input, q.Get("params").Raw)
		input.WriteString("}\n")
		return true
	})
	switch {
	case n == 0:
		return nil, badRequest("invalid_request", "requests", "requests must be a non-empty array of {custom_id, params}")
	case n > maxMessageRequests:
		return nil, badRequest("invalid_request", "requests", "a batch takes at most "+strconv.Itoa(maxMessageRequests)+" requests")
	}
	return &input, nil
}

// writeOneLine writes a JSON value from a checked body on one line (null
// when absent). A line break in valid JSON is only ever whitespace (one
// in a string is escaped), so it becomes a space: a request sent pretty-
// printed stays one line of the input file without being parsed again.
func writeOneLine(b *bytes.Buffer, raw string) {
	if raw == "" {
		b.WriteString("null")
		return
	}
	if !strings.ContainsAny(raw, "\r\n") {
		b.WriteString(raw)
		return
	}
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c == '\n' || c == '\r' {
			c = ' '
		}
		b.WriteByte(c)
	}
}

func (s *Service) dropFile(r *http.Request, id string) {
	_ = s.Files.DeleteFile(context0(r), id)
	_ = s.Blobs.Delete(context0(r), id)
}

// baseURL is where clients reach the gateway: the configured server
// address, else the origin the request came to.
func (s *Service) baseURL(r *http.Request) string {
	if s.Options.PublicAddress != "" {
		return strings.TrimRight(s.Options.PublicAddress, "/")
	}
	scheme := "http"
	if r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https" {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// readBody reads a JSON body within limit (413 past it).
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	var buf bytes.Buffer
	_, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, limit))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return nil, &ir.Error{Status: 413, Kind: ir.KindRequestTooLarge, Code: "request_too_large", Message: "the request body is larger than the gateway accepts"}
	}
	if err != nil {
		return nil, badRequest("invalid_body", "", "the request body could not be read")
	}
	return buf.Bytes(), nil
}

func (s *Service) ownMessageBatch(w http.ResponseWriter, r *http.Request) (*store.Batch, bool) {
	p, ok := s.messagesPrincipal(w, r)
	if !ok {
		return nil, false
	}
	b, err := s.ownBatch(r, p.UserID, kindMessages, r.PathValue("id"))
	if err != nil {
		writeErr(w, s.Messages, err)
		return nil, false
	}
	return b, true
}

func (s *Service) getMessageBatch(w http.ResponseWriter, r *http.Request) {
	if b, ok := s.ownMessageBatch(w, r); ok {
		writeJSON(w, http.StatusOK, s.toMessageBatch(r, b))
	}
}

func (s *Service) cancelMessageBatch(w http.ResponseWriter, r *http.Request) {
	b, ok := s.ownMessageBatch(w, r)
	if !ok {
		return
	}
	b, err := s.cancel(r, b)
	if err != nil {
		writeErr(w, s.Messages, err)
		return
	}
	writeJSON(w, http.StatusOK, s.toMessageBatch(r, b))
}

func (s *Service) listMessageBatches(w http.ResponseWriter, r *http.Request) {
	p, ok := s.messagesPrincipal(w, r)
	if !ok {
		return
	}
	limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
	if limit <= 0 || limit > 100 {
		limit = 20
	}
	bs, err := s.Batches.ListBatches(r.Context(), p.UserID, kindMessages, r.URL.Query().Get("after_id"), limit+1)
	if err != nil {
		writeErr(w, s.Messages, err)
		return
	}
	more := len(bs) > limit
	if more {
		bs = bs[:limit]
	}
	data := make([]messageBatchObject, 0, len(bs))
	for _, b := range bs {
		data = append(data, s.toMessageBatch(r, b))
	}
	out := map[string]any{"data": data, "has_more": more, "first_id": nil, "last_id": nil}
	if len(data) > 0 {
		out["first_id"], out["last_id"] = data[0].ID, data[len(data)-1].ID
	}
	writeJSON(w, http.StatusOK, out)
}

// messageResult is one line of a Message Batch's results.
type messageResult struct {
	CustomID string         `json:"custom_id"`
	Result   map[string]any `json:"result"`
}

// messageBatchResults streams the results as JSON lines, from the line
// outcomes and, for lines that never ran, the input.
func (s *Service) messageBatchResults(w http.ResponseWriter, r *http.Request) {
	b, ok := s.ownMessageBatch(w, r)
	if !ok {
		return
	}
	if !terminal(b.Status) {
		writeErr(w, s.Messages, badRequest("invalid_request", "", "the batch's results are available once its processing has ended"))
		return
	}
	w.Header().Set("Content-Type", "application/x-jsonl")
	w.WriteHeader(http.StatusOK)
	enc := json.NewEncoder(w)
	done := map[int]bool{}
	_ = s.eachOutcome(r.Context(), b.ID, func(l *store.BatchLine) {
		done[l.Line] = true
		res := map[string]any{"type": "succeeded", "message": json.RawMessage(orNull([]byte(l.Body)))}
		if !l.OK {
			res = map[string]any{"type": "errored", "error": json.RawMessage(orNull([]byte(l.Body)))}
		}
		_ = enc.Encode(messageResult{CustomID: l.CustomID, Result: res})
	})
	unrun := "canceled"
	if b.Status == store.BatchExpired {
		unrun = "expired"
	}
	_ = s.eachLine(r.Context(), b.InputFileID, func(n int, raw []byte) error {
		if !done[n] {
			return enc.Encode(messageResult{CustomID: gjson.GetBytes(raw, "custom_id").String(), Result: map[string]any{"type": unrun}})
		}
		return nil
	})
}
