package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol/openai"
	"github.com/turnpike-gw/turnpike/internal/protocol/responses"
)

// batchesSetting is settings.batches: whether it is set, and to what.
func batchesSetting(t Target) (on, set bool) {
	on, set = t.Settings["batches"].(bool)
	return on, set
}

// BatchForm is the OpenAI form for the presets whose provider runs
// batches (OpenAI), and for any other when settings.batches says so.
func (a OpenAICompatible) BatchForm(t Target) BatchForm {
	on, set := batchesSetting(t)
	if !set {
		on = a.Batches
	}
	if on {
		return BatchOpenAI
	}
	return ""
}

func (a OpenAICompatible) batches() openAIBatches { return openAIBatches{ep: a} }

// UploadBatchInput posts the input file to {prefix}/files.
func (a OpenAICompatible) UploadBatchInput(ctx context.Context, t Target, lines BatchLines) (*http.Request, error) {
	return a.batches().upload(ctx, t, lines)
}

// CreateBatch posts {prefix}/batches.
func (a OpenAICompatible) CreateBatch(ctx context.Context, t Target, endpoint, fileID string, _ BatchLines) (*http.Request, error) {
	return a.batches().create(ctx, t, endpoint, fileID)
}

// GetBatch reads {prefix}/batches/{id}.
func (a OpenAICompatible) GetBatch(ctx context.Context, t Target, id string) (*http.Request, error) {
	return a.batches().get(ctx, t, id)
}

// CancelBatch posts {prefix}/batches/{id}/cancel.
func (a OpenAICompatible) CancelBatch(ctx context.Context, t Target, id string) (*http.Request, error) {
	return a.batches().cancel(ctx, t, id)
}

// BatchResults reads a result file's content.
func (a OpenAICompatible) BatchResults(ctx context.Context, t Target, _, ref string) (*http.Request, error) {
	return a.batches().results(ctx, t, ref)
}

// DecodeBatch reads a batch object.
func (OpenAICompatible) DecodeBatch(body []byte) (BatchState, error) { return decodeOpenAIBatch(body) }

// DecodeBatchResult reads an output or error file line.
func (OpenAICompatible) DecodeBatchResult(endpoint string, line []byte) (BatchResult, bool) {
	return decodeOpenAIResult(endpoint, line)
}

// BatchForm is the OpenAI form unless settings.batches turns it off.
func (Azure) BatchForm(t Target) BatchForm {
	if on, set := batchesSetting(t); set && !on {
		return ""
	}
	return BatchOpenAI
}

// batches is the OpenAI form on Azure's layout: the deployment API (any
// api_version but v1) names endpoints without the version, in the create
// and in each line's url, and takes the deployment as each line's model.
func (a Azure) batches(t Target) openAIBatches {
	v := t.Setting("api_version")
	return openAIBatches{ep: a, unversioned: v != "v1"}
}

// UploadBatchInput posts the input file to /openai/files.
func (a Azure) UploadBatchInput(ctx context.Context, t Target, lines BatchLines) (*http.Request, error) {
	return a.batches(t).upload(ctx, t, lines)
}

// CreateBatch posts /openai/batches.
func (a Azure) CreateBatch(ctx context.Context, t Target, endpoint, fileID string, _ BatchLines) (*http.Request, error) {
	return a.batches(t).create(ctx, t, endpoint, fileID)
}

// GetBatch reads /openai/batches/{id}.
func (a Azure) GetBatch(ctx context.Context, t Target, id string) (*http.Request, error) {
	return a.batches(t).get(ctx, t, id)
}

// CancelBatch posts /openai/batches/{id}/cancel.
func (a Azure) CancelBatch(ctx context.Context, t Target, id string) (*http.Request, error) {
	return a.batches(t).cancel(ctx, t, id)
}

// BatchResults reads a result file's content.
func (a Azure) BatchResults(ctx context.Context, t Target, _, ref string) (*http.Request, error) {
	return a.batches(t).results(ctx, t, ref)
}

// DecodeBatch reads a batch object.
func (Azure) DecodeBatch(body []byte) (BatchState, error) { return decodeOpenAIBatch(body) }

// DecodeBatchResult reads an output or error file line.
func (Azure) DecodeBatchResult(endpoint string, line []byte) (BatchResult, bool) {
	return decodeOpenAIResult(endpoint, line)
}

// openAIBatches is the OpenAI files and batches API on a provider that
// serves OpenAI-style paths (ep builds them with the channel's address
// and credentials).
type openAIBatches struct {
	ep          Endpoints
	unversioned bool
}

// endpoint is a gateway endpoint as the provider names it.
func (b openAIBatches) endpoint(e string) string {
	if b.unversioned {
		return strings.TrimPrefix(e, "/v1")
	}
	return e
}

// line is an input line as the provider takes it: the model its upstream
// name, the url its name of the endpoint.
func (b openAIBatches) line(t Target, raw []byte) []byte {
	if m := gjson.GetBytes(raw, "body.model"); t.Model != "" && m.Type == gjson.String && m.Str != t.Model {
		raw, _ = sjson.SetBytes(raw, "body.model", t.Model)
	}
	if u := gjson.GetBytes(raw, "url"); b.unversioned && u.Type == gjson.String {
		raw, _ = sjson.SetBytes(raw, "url", b.endpoint(u.Str))
	}
	return raw
}

// upload streams the input as the multipart upload of a file with
// purpose batch, one rewritten line per line.
func (b openAIBatches) upload(ctx context.Context, t Target, lines BatchLines) (*http.Request, error) {
	boundary := multipart.NewWriter(io.Discard).Boundary()
	return streamed(func(body io.Reader) (*http.Request, error) {
		return b.ep.Endpoint(ctx, t, http.MethodPost, "/v1/files", body, "multipart/form-data; boundary="+boundary)
	}, func(w io.Writer) error {
		mw := multipart.NewWriter(w)
		if err := mw.SetBoundary(boundary); err != nil {
			return err
		}
		if err := mw.WriteField("purpose", "batch"); err != nil {
			return err
		}
		fw, err := mw.CreateFormFile("file", "batch.jsonl")
		if err != nil {
			return err
		}
		err = lines(func(raw []byte) error {
			if _, err := fw.Write(b.line(t, raw)); err != nil {
				return err
			}
			_, err := fw.Write([]byte{'\n'})
			return err
		})
		if err != nil {
			return err
		}
		return mw.Close()
	})
}

func (b openAIBatches) create(ctx context.Context, t Target, endpoint, fileID string) (*http.Request, error) {
	body, err := json.Marshal(struct {
		InputFileID      string `json:"input_file_id"`
		Endpoint         string `json:"endpoint"`
		CompletionWindow string `json:"completion_window"`
	}{fileID, b.endpoint(endpoint), "24h"})
	if err != nil {
		return nil, err
	}
	return b.ep.Endpoint(ctx, t, http.MethodPost, "/v1/batches", bytes.NewReader(body), "application/json")
}

func (b openAIBatches) get(ctx context.Context, t Target, id string) (*http.Request, error) {
	return b.ep.Endpoint(ctx, t, http.MethodGet, "/v1/batches/"+url.PathEscape(id), http.NoBody, "")
}

func (b openAIBatches) cancel(ctx context.Context, t Target, id string) (*http.Request, error) {
	return b.ep.Endpoint(ctx, t, http.MethodPost, "/v1/batches/"+url.PathEscape(id)+"/cancel", http.NoBody, "")
}

func (b openAIBatches) results(ctx context.Context, t Target, fileID string) (*http.Request, error) {
	return b.ep.Endpoint(ctx, t, http.MethodGet, "/v1/files/"+url.PathEscape(fileID)+"/content", http.NoBody, "")
}

// decodeOpenAIBatch reads a batch object; an ended batch's result sets
// are its output and error files.
func decodeOpenAIBatch(body []byte) (BatchState, error) {
	if !gjson.ValidBytes(body) {
		return BatchState{}, &BatchBodyError{What: "batch"}
	}
	up := gjson.ParseBytes(body)
	st := BatchState{Status: up.Get("status").String(),
		Completed: int(up.Get("request_counts.completed").Int()), Failed: int(up.Get("request_counts.failed").Int())}
	switch st.Status {
	case "completed", "failed", "expired", "cancelled":
		st.Ended = true
	default:
		return st, nil
	}
	for _, f := range []string{up.Get("output_file_id").String(), up.Get("error_file_id").String()} {
		if f != "" {
			st.Results = append(st.Results, f)
		}
	}
	if e := up.Get("errors"); st.Status == "failed" && e.IsObject() {
		st.Errors = json.RawMessage(e.Raw)
	}
	return st, nil
}

// decodeOpenAIResult reads a result file line: the answer's status and
// body (or the line's error), and an answered line's usage by the codec
// of the endpoint's wire.
func decodeOpenAIResult(endpoint string, line []byte) (BatchResult, bool) {
	l := gjson.ParseBytes(line)
	if !l.IsObject() {
		return BatchResult{}, false
	}
	r := BatchResult{CustomID: l.Get("custom_id").String(), Status: int(l.Get("response.status_code").Int())}
	body := l.Get("response.body")
	if !body.Exists() || body.Type == gjson.Null {
		body = l.Get("error")
	}
	r.Body = []byte(body.Raw)
	if r.Status >= 200 && r.Status < 300 {
		r.OK, r.Usage = true, answerUsage(endpoint, r.Body)
	}
	return r, true
}

// answerUsage is the usage of an OpenAI-form answer to endpoint.
func answerUsage(endpoint string, body []byte) ir.Usage {
	var u ir.Usage
	if endpoint == "/v1/responses" {
		u, _ = responses.SniffUsage(body)
	} else {
		u, _ = openai.Chat.SniffUsage(body)
	}
	return u.NonNegative()
}
