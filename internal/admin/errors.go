package admin

import (
	"errors"
	"fmt"
	"github.com/turnpike-gw/turnpike/internal/apijson"
	"net/http"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// apiError is an error with a status and a message that is safe to show.
type apiError struct {
	Status  int
	Code    string
	Message string
}

func (e *apiError) Error() string { return e.Message }

func errorf(status int, code, format string, args ...any) *apiError {
	return &apiError{Status: status, Code: code, Message: fmt.Sprintf(format, args...)}
}

func badRequest(format string, args ...any) *apiError {
	return errorf(http.StatusBadRequest, "invalid_request", format, args...)
}

func badField(name, format string, args ...any) *apiError {
	return errorf(http.StatusBadRequest, "invalid_field", name+" "+format, args...)
}

func notFound(what string) *apiError {
	return errorf(http.StatusNotFound, "not_found", "%s not found", what)
}

func forbidden(format string, args ...any) *apiError {
	return errorf(http.StatusForbidden, "forbidden", format, args...)
}

var errUnauthenticated = errorf(http.StatusUnauthorized, "unauthorized",
	"sign in, or send the root token as a Bearer token")

// classify maps any handler error to what the client sees. Store sentinels
// become 404/409; anything unrecognised is a 500 whose cause stays in the log.
func classify(err error, what string) *apiError {
	var ae *apiError
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.As(err, &tooBig):
		return errorf(http.StatusRequestEntityTooLarge, "body_too_large", "the request body is larger than %d bytes", tooBig.Limit)
	case errors.Is(err, store.ErrNotFound):
		return notFound(what)
	case errors.Is(err, store.ErrConflict):
		return errorf(http.StatusConflict, "conflict", "a %s with this name already exists", what)
	case store.Unavailable(err):
		return errStoreUnavailable
	}
	return errorf(http.StatusInternalServerError, "internal_error", "the request could not be completed; see the server log")
}

func writeError(w http.ResponseWriter, e *apiError) {
	apijson.WriteError(w, e.Status, apijson.Error{Code: e.Code, Message: e.Message})
}

// list is the shape of every paged listing.
type list[T any] struct {
	Items []T `json:"items"`
	Total int `json:"total"`
}

func newList[T any](items []T, total int) list[T] {
	if items == nil {
		items = []T{}
	}
	return list[T]{Items: items, Total: total}
}

// deleted is the answer to a DELETE: a body, so clients that decode every
// answer as JSON keep working, as with the established gateways.
type deleted struct {
	ID      int64 `json:"id"`
	Deleted bool  `json:"deleted"`
}

var errStoreUnavailable = errorf(http.StatusServiceUnavailable, "store_unavailable",
	"the database does not answer; try again shortly")
