package upstream

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/turnpike-gw/turnpike/internal/ir"
)

// CodeOutOfResources is the code of a call the gateway could not send for
// want of a descriptor, a port or memory of its own (Shortage).
const CodeOutOfResources = "gateway_out_of_resources"

// Shortage is the error of an upstream request that failed for want of
// the gateway's own resources — a file descriptor, kernel memory for a
// socket, a free local port — or nil when err is no such thing. Such a
// failure says nothing of the channel, and every other channel would need
// the same resource: a 503 that stops the call (RetryNever, which channel
// health does not count) and names the shortage.
func Shortage(err error) *ir.Error {
	var what string
	switch {
	case errors.Is(err, syscall.EMFILE):
		what = "the gateway has no free file descriptor (too many open files: raise its descriptor limit)"
	case errors.Is(err, syscall.ENFILE):
		what = "the system has no free file descriptor (the kernel's open-file table is full)"
	case errors.Is(err, syscall.ENOBUFS), errors.Is(err, syscall.ENOMEM):
		what = "the system has no memory left for another connection"
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		what = "the gateway has no free local port for another connection"
	default:
		return nil
	}
	return &ir.Error{Status: 503, Kind: ir.KindOverloaded, Code: CodeOutOfResources,
		Message: "the upstream could not be reached: " + what, Retry: ir.RetryNever, Cause: err}
}

// lastShortageLog is when NoteShortage last wrote (Unix nanoseconds).
var lastShortageLog atomic.Int64

// NoteShortage logs the gateway's own shortage at most once a second: a
// node out of descriptors fails every call that needs one at once, and a
// line per call would bury the cause. Channel health is not told (the
// channel did nothing wrong), so this line is where an operator learns it.
func NoteShortage(ctx context.Context, log *slog.Logger, e *ir.Error) {
	now, last := time.Now().UnixNano(), lastShortageLog.Load()
	if now-last < int64(time.Second) || !lastShortageLog.CompareAndSwap(last, now) {
		return
	}
	log.ErrorContext(ctx, "a call failed for want of the gateway's own resources; calls fail with 503 until they free up (docs/OPERATIONS.md, file descriptors)",
		"err", e.Message)
}
