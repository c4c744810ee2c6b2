package loadtest

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"time"
)

// NewBaselineProxy returns the reference the gateway is measured against: a
// bare reverse proxy with immediate flushing and the same connection pool
// sizes as the gateway's upstream client, so the comparison isolates the
// gateway's own work.
//
// It reads each request body into memory before forwarding it, as the
// gateway does. Streaming the inbound body straight through is not safe
// with an HTTP/1 server: writing the response headers closes the inbound
// body, and a transport still finishing the upstream request then tears
// the upstream connection down mid-answer (golang/go#40747), which showed
// up here as cut streams.
func NewBaselineProxy(upstream *url.URL) http.Handler {
	p := httputil.NewSingleHostReverseProxy(upstream)
	p.FlushInterval = -1
	p.Transport = baselineTransport(&http.Transport{
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        1024,
		MaxIdleConnsPerHost: 256,
		IdleConnTimeout:     90 * time.Second,
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 32<<20))
		if err != nil {
			http.Error(w, "bad request body", http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		p.ServeHTTP(w, r)
	})
}
