package upstream

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/turnpike-gw/turnpike/internal/protocol/anthropic"
)

var _ Batches = Anthropic{}

// BatchForm is Message Batches when settings.batches says so.
func (Anthropic) BatchForm(t Target) BatchForm {
	if on, _ := batchesSetting(t); on {
		return BatchMessages
	}
	return ""
}

// UploadBatchInput is nil: a Message Batch takes its requests with the
// create.
func (Anthropic) UploadBatchInput(context.Context, Target, BatchLines) (*http.Request, error) {
	return nil, nil
}

// CreateBatch streams the lines as {"requests":[{"custom_id","params"}]}
// to /v1/messages/batches, each line's body its params with the model
// named as the provider names it.
func (a Anthropic) CreateBatch(ctx context.Context, t Target, _, _ string, lines BatchLines) (*http.Request, error) {
	return streamed(func(body io.Reader) (*http.Request, error) {
		return a.batchRequest(ctx, t, http.MethodPost, "", body)
	}, func(w io.Writer) error {
		if _, err := io.WriteString(w, `{"requests":[`); err != nil {
			return err
		}
		first := true
		err := lines(func(raw []byte) error {
			if !first {
				if _, err := w.Write([]byte{','}); err != nil {
					return err
				}
			}
			first = false
			_, err := w.Write(messagesRequest(t, raw))
			return err
		})
		if err != nil {
			return err
		}
		_, err = io.WriteString(w, `]}`)
		return err
	})
}

// messagesRequest is one input line as a Message Batches request.
func messagesRequest(t Target, raw []byte) []byte {
	l := gjson.ParseBytes(raw)
	params := []byte(l.Get("body").Raw)
	if m := l.Get("body.model"); t.Model != "" && m.Type == gjson.String && m.Str != t.Model {
		params, _ = sjson.SetBytes(params, "model", t.Model)
	}
	id, _ := json.Marshal(l.Get("custom_id").String())
	out := make([]byte, 0, len(params)+len(id)+32)
	out = append(out, `{"custom_id":`...)
	out = append(out, id...)
	out = append(out, `,"params":`...)
	out = append(out, params...)
	return append(out, '}')
}

// GetBatch reads /v1/messages/batches/{id}.
func (a Anthropic) GetBatch(ctx context.Context, t Target, id string) (*http.Request, error) {
	return a.batchRequest(ctx, t, http.MethodGet, "/"+url.PathEscape(id), http.NoBody)
}

// CancelBatch posts /v1/messages/batches/{id}/cancel.
func (a Anthropic) CancelBatch(ctx context.Context, t Target, id string) (*http.Request, error) {
	return a.batchRequest(ctx, t, http.MethodPost, "/"+url.PathEscape(id)+"/cancel", http.NoBody)
}

// BatchResults reads /v1/messages/batches/{id}/results: from the
// channel's address, never from the results_url an answer names.
func (a Anthropic) BatchResults(ctx context.Context, t Target, id, _ string) (*http.Request, error) {
	return a.batchRequest(ctx, t, http.MethodGet, "/"+url.PathEscape(id)+"/results", http.NoBody)
}

func (Anthropic) batchRequest(ctx context.Context, t Target, method, rest string, body io.Reader) (*http.Request, error) {
	u := JoinPrefix(t.Base(anthropicBase), t.PathPrefix("/v1"), "/v1/messages/batches"+rest)
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, err
	}
	anthropicHeaders(req.Header, t.Key, nil)
	ApplyHeaders(req, t)
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

// DecodeBatch reads a message batch; an ended one has one result set.
func (Anthropic) DecodeBatch(body []byte) (BatchState, error) {
	if !gjson.ValidBytes(body) {
		return BatchState{}, &BatchBodyError{What: "message batch"}
	}
	up := gjson.ParseBytes(body)
	st := BatchState{Status: up.Get("processing_status").String(),
		Completed: int(up.Get("request_counts.succeeded").Int()), Failed: int(up.Get("request_counts.errored").Int())}
	switch st.Status {
	case "canceling":
		st.Status = "cancelling"
	case "ended":
		st.Ended, st.Results = true, []string{"results"}
	}
	return st, nil
}

// DecodeBatchResult reads a results line: a succeeded message with its
// usage read by the messages codec, or an error (a server-side one as
// 500). Cancelled and expired requests never ran.
func (Anthropic) DecodeBatchResult(_ string, line []byte) (BatchResult, bool) {
	l := gjson.ParseBytes(line)
	r := BatchResult{CustomID: l.Get("custom_id").String()}
	switch l.Get("result.type").String() {
	case "succeeded":
		msg := []byte(l.Get("result.message").Raw)
		u, _ := anthropic.Messages.SniffUsage(msg)
		r.OK, r.Status, r.Body, r.Usage = true, 200, msg, u.NonNegative()
	case "errored":
		r.Status, r.Body = 400, []byte(l.Get("result.error").Raw)
		if t := l.Get("result.error.error.type").String(); t == "api_error" || t == "overloaded_error" {
			r.Status = 500
		}
	default:
		return BatchResult{}, false
	}
	return r, true
}
