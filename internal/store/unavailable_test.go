package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"
)

func TestUnavailableTellsConnectionFailuresFromRequestErrors(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{"a refused connection", fmt.Errorf("connect: %w", &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}), true},
		{"a query out of time", fmt.Errorf("list users: %w", context.DeadlineExceeded), true},
		{"a broken pooled connection", driver.ErrBadConn, true},
		{"a connection cut mid-answer", fmt.Errorf("read: %w", io.ErrUnexpectedEOF), true},
		{"a missing record", ErrNotFound, false},
		{"a taken name", fmt.Errorf("create: %w", ErrConflict), false},
		{"a syntax error", errors.New("near \"SELEC\": syntax error"), false},
	}
	for _, c := range cases {
		if got := Unavailable(c.err); got != c.want {
			t.Errorf("%s: Unavailable = %v, want %v", c.name, got, c.want)
		}
	}
}
