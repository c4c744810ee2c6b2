// Package apijson writes the administration API's answers: JSON values,
// never cached, and the one error shape every /api route answers,
// {"error":{"code","message"}} (CONTRACT §3), whichever package serves the
// route.
package apijson

import (
	"encoding/json"
	"net/http"
)

// Error is the body of an /api error. Problems lists what a rejected upload
// got wrong, where there is such a list.
type Error struct {
	Code     string `json:"code"`
	Message  string `json:"message"`
	Problems any    `json:"problems,omitempty"`
}

type errorBody struct {
	Error Error `json:"error"`
}

// Write answers v as JSON with status. A value that cannot be encoded is
// reported before anything is written, so the caller can still answer an
// error instead.
func Write(w http.ResponseWriter, status int, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
	return nil
}

// WriteError answers the /api error shape with status.
func WriteError(w http.ResponseWriter, status int, e Error) {
	_ = Write(w, status, errorBody{Error: e})
}
