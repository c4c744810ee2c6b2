// Package apijson writes the answers of the /api surface: JSON values and the
// one error envelope, {"error":{"code","message"}}, every /api handler
// answers with (CONTRACT §6). It is a leaf: it knows HTTP and JSON, nothing
// of the gateway, so admin, plugin, task and app can all share it.
package apijson

import (
	"encoding/json"
	"net/http"
)

// Detail is the inside of the error envelope. Problems is the one extension:
// the validation problems of a refused plugin module, absent otherwise.
type Detail struct {
	Code     string `json:"code"`
	Message  string `json:"message"`
	Problems any    `json:"problems,omitempty"`
}

// Envelope is the body of every /api error.
type Envelope struct {
	Error Detail `json:"error"`
}

// Encode writes v as JSON with status. The value is encoded before anything
// is written, so on an error nothing has been sent and the caller can still
// answer in its own dialect.
func Encode(w http.ResponseWriter, status int, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	// Answers carry account data and secrets shown once; no cache may keep them.
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
	return nil
}

// Write writes v as JSON with status; a value that cannot be encoded becomes
// a 500 in the error envelope instead of a truncated body.
func Write(w http.ResponseWriter, status int, v any) {
	if err := Encode(w, status, v); err != nil {
		Error(w, http.StatusInternalServerError, "internal_error", "the answer could not be encoded; see the server log")
	}
}

// Error writes the error envelope with status.
func Error(w http.ResponseWriter, status int, code, message string) {
	WriteError(w, status, Detail{Code: code, Message: message})
}

// WriteError writes the error envelope around d with status.
func WriteError(w http.ResponseWriter, status int, d Detail) {
	// An Envelope of strings always encodes; Problems come from the
	// manifest validator as plain structs.
	if err := Encode(w, status, Envelope{Error: d}); err != nil {
		d.Problems = nil
		_ = Encode(w, status, Envelope{Error: d})
	}
}
