package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"syscall"
)

// Unavailable reports an error of reaching the database rather than of the
// request: a refused or broken connection, or a query that ran out of
// time. Callers answer it 503 store_unavailable (CONTRACT §16), not 500.
func Unavailable(err error) bool {
	var netErr net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, driver.ErrBadConn) ||
		errors.As(err, &netErr) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, io.ErrUnexpectedEOF)
}
