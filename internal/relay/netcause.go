package relay

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"
)

// unreachableCause names why an upstream could not be reached, in words an
// operator can act on (fix the address, the DNS, the certificate, the
// firewall). It names no host or key, so it may go to clients too.
func unreachableCause(err error) string {
	var dnsErr *net.DNSError
	var certErr *tls.CertificateVerificationError
	var unknownAuth x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var invalid x509.CertificateInvalidError
	var recordErr tls.RecordHeaderError
	var alert tls.AlertError
	var netErr net.Error
	switch {
	case errors.As(err, &dnsErr) && dnsErr.IsNotFound:
		return "no such host"
	case errors.As(err, &dnsErr):
		return "the host name could not be resolved"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset"
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return "no route to host"
	case errors.As(err, &certErr), errors.As(err, &unknownAuth), errors.As(err, &hostErr), errors.As(err, &invalid):
		return "TLS certificate not accepted"
	case errors.As(err, &recordErr), errors.As(err, &alert):
		return "TLS handshake failed"
	case errors.As(err, &netErr) && netErr.Timeout():
		return "timed out"
	case goAway(err):
		return "the upstream closed its HTTP/2 connection (GOAWAY)"
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "the connection closed before the answer"
	}
	return "network error"
}

// goAway recognises a call lost with an HTTP/2 connection its upstream
// closed (a GOAWAY, as a server's rapid-reset guard sends with
// ENHANCE_YOUR_CALM). net/http's HTTP/2 error types are unexported, so the
// text its GoAwayError and lost-connection errors carry is all there is.
func goAway(err error) bool {
	s := err.Error()
	return strings.Contains(s, "GOAWAY") || strings.Contains(s, "http2: client connection lost")
}

// lostUnderway reports a failure that came after the connection carried
// the request — not a dial, name lookup or handshake that failed for this
// attempt alone — so that every call the connection carried lost it in the
// same event (an HTTP/2 connection carries many).
func lostUnderway(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return false
	}
	var dnsErr *net.DNSError
	var certErr *tls.CertificateVerificationError
	var recordErr tls.RecordHeaderError
	var alert tls.AlertError
	return !errors.As(err, &dnsErr) && !errors.As(err, &certErr) && !errors.As(err, &recordErr) && !errors.As(err, &alert)
}
