package batch

import (
	"encoding/json"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// batchObject is the OpenAI batch object.
type batchObject struct {
	ID               string          `json:"id"`
	Object           string          `json:"object"`
	Endpoint         string          `json:"endpoint"`
	Errors           json.RawMessage `json:"errors"`
	InputFileID      string          `json:"input_file_id"`
	CompletionWindow string          `json:"completion_window"`
	Status           string          `json:"status"`
	OutputFileID     *string         `json:"output_file_id"`
	ErrorFileID      *string         `json:"error_file_id"`
	CreatedAt        int64           `json:"created_at"`
	InProgressAt     *int64          `json:"in_progress_at"`
	ExpiresAt        *int64          `json:"expires_at"`
	FinalizingAt     *int64          `json:"finalizing_at"`
	CompletedAt      *int64          `json:"completed_at"`
	FailedAt         *int64          `json:"failed_at"`
	ExpiredAt        *int64          `json:"expired_at"`
	CancellingAt     *int64          `json:"cancelling_at"`
	CancelledAt      *int64          `json:"cancelled_at"`
	RequestCounts    requestCounts   `json:"request_counts"`
	Metadata         json.RawMessage `json:"metadata"`
}

type requestCounts struct {
	Total     int `json:"total"`
	Completed int `json:"completed"`
	Failed    int `json:"failed"`
}

func optTime(v int64) *int64 {
	if v == 0 {
		return nil
	}
	return &v
}

func optString(v string) *string {
	if v == "" {
		return nil
	}
	return &v
}

func orNull(b json.RawMessage) json.RawMessage {
	if len(b) == 0 {
		return json.RawMessage("null")
	}
	return b
}

func toBatchObject(b *store.Batch) batchObject {
	return batchObject{ID: b.PublicID, Object: "batch", Endpoint: b.Endpoint, Errors: orNull(b.Errors),
		InputFileID: b.InputFileID, CompletionWindow: b.CompletionWindow, Status: b.Status,
		OutputFileID: optString(b.OutputFileID), ErrorFileID: optString(b.ErrorFileID), CreatedAt: b.CreatedAt,
		InProgressAt: optTime(b.InProgressAt), ExpiresAt: optTime(b.ExpiresAt), FinalizingAt: optTime(b.FinalizingAt),
		CompletedAt: optTime(b.CompletedAt), FailedAt: optTime(b.FailedAt), ExpiredAt: optTime(b.ExpiredAt),
		CancellingAt: optTime(b.CancellingAt), CancelledAt: optTime(b.CancelledAt),
		RequestCounts: requestCounts{Total: b.Total, Completed: b.Completed, Failed: b.Failed}, Metadata: orNull(b.Metadata)}
}

// running reports whether a batch's lines are still to run.
func running(status string) bool {
	return status == store.BatchInProgress || status == store.BatchValidating
}

// terminal reports whether a status is final.
func terminal(status string) bool {
	switch status {
	case store.BatchCompleted, store.BatchFailed, store.BatchExpired, store.BatchCancelled:
		return true
	}
	return false
}
