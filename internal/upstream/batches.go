package upstream

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"

	"github.com/tidwall/gjson"

	"github.com/turnpike-gw/turnpike/internal/ir"
)

// BatchForm is the form of batch a provider runs itself (CONTRACT §15).
type BatchForm string

// The batch forms: the OpenAI files and batches API (OpenAI, Azure, and
// OpenAI-compatible channels with settings.batches: true), and Message
// Batches (messages-wire channels with settings.batches: true).
const (
	BatchOpenAI   BatchForm = "openai"
	BatchMessages BatchForm = "messages"
)

// BatchLines yields a batch's input lines in order, each in the OpenAI
// batch line form ({"custom_id","method","url","body"}) and naming the
// model as the gateway does. A line is valid only during its call.
type BatchLines func(each func(line []byte) error) error

// Batches is an adapter whose provider runs batches: it builds every
// request of the provider's batch API with the channel's own address,
// credentials and headers, and reads the provider's answers. Sending them,
// judging failures (channel health) and billing are the caller's, as for
// every adapter. Lines are rewritten for the provider with t.Model, the
// upstream name of the batch's one model.
type Batches interface {
	// BatchForm is the form of batch the channel runs, "" for none.
	BatchForm(t Target) BatchForm
	// UploadBatchInput builds the upload of the input file, whose answer
	// names the file (CreatedID); nil when the provider takes the input
	// with the create (Message Batches).
	UploadBatchInput(ctx context.Context, t Target, lines BatchLines) (*http.Request, error)
	// CreateBatch builds the create of the provider batch for the gateway
	// endpoint (/v1/chat/completions, …) from the uploaded file, or from
	// the lines when there is no upload. Its answer names the batch
	// (CreatedID).
	CreateBatch(ctx context.Context, t Target, endpoint, fileID string, lines BatchLines) (*http.Request, error)
	GetBatch(ctx context.Context, t Target, id string) (*http.Request, error)
	CancelBatch(ctx context.Context, t Target, id string) (*http.Request, error)
	// BatchResults builds the read of one result set (BatchState.Results)
	// of the ended batch id, always at the channel's own address: a URL
	// an answer names is never followed with the key.
	BatchResults(ctx context.Context, t Target, id, ref string) (*http.Request, error)
	// DecodeBatch reads a get answer.
	DecodeBatch(body []byte) (BatchState, error)
	// DecodeBatchResult reads one line of a result set for the gateway
	// endpoint; ok is false for a line that never ran (cancelled or
	// expired before it started).
	DecodeBatchResult(endpoint string, line []byte) (r BatchResult, ok bool)
}

// BatchState is a provider batch as its get answer shows it.
type BatchState struct {
	// Status is the provider's status in the OpenAI form's words
	// (validating, in_progress, finalizing, completed, failed, expired,
	// cancelling, cancelled); Message Batches read as in_progress,
	// cancelling or ended.
	Status string
	// Ended: the provider finished with the batch; its results are final.
	Ended bool
	// Completed and Failed count the lines so far.
	Completed, Failed int
	// Results name the result sets of an ended batch, for BatchResults.
	Results []string
	// Errors is the provider's refusal of the whole batch (the OpenAI
	// form's errors list, line numbers and all), raw JSON.
	Errors json.RawMessage
}

// BatchResult is one line of a provider batch's results.
type BatchResult struct {
	CustomID string
	// Status is the HTTP status the line's request had (0 when the
	// provider reports no answer, only an error).
	Status int
	// Body is the line's answer, or its error, as raw JSON.
	Body []byte
	// OK is a line that was answered 2xx; Usage is its usage, read by the
	// codec of the answer's wire (cache and reasoning tokens included).
	OK    bool
	Usage ir.Usage
}

// CreatedID is the id of what an upload or create answer created; ""
// when the answer names none.
func CreatedID(body []byte) string { return gjson.GetBytes(body, "id").String() }

// BatchBodyError is a provider answer that is not the batch object it
// should be.
type BatchBodyError struct{ What string }

func (e *BatchBodyError) Error() string { return "the provider's " + e.What + " is not valid JSON" }

// streamed is the request build makes with a body that write produces,
// on its own goroutine, while the request is sent. The HTTP client closes
// the body however the exchange ends, which stops write at its next
// write; a caller that does not send the request must close its body.
func streamed(build func(body io.Reader) (*http.Request, error), write func(w io.Writer) error) (*http.Request, error) {
	pr, pw := io.Pipe()
	req, err := build(pr)
	if err != nil {
		pr.Close()
		return nil, err
	}
	go func() {
		bw := bufio.NewWriterSize(pw, 64<<10)
		err := write(bw)
		if err == nil {
			err = bw.Flush()
		}
		pw.CloseWithError(err)
	}()
	return req, nil
}
