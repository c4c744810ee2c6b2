package upstream

import (
	"errors"
	"syscall"

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
