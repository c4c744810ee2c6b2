package task

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/plugin"
	"github.com/turnpike-gw/turnpike/internal/task/egress"
)

// maxUpstreamBody caps what the host reads of one upstream answer.
const maxUpstreamBody = 16 << 20

// upstreamResponse is one upstream answer, read whole.
type upstreamResponse struct {
	status  int
	headers http.Header
	raw     []byte
	body    any // parsed JSON, or the text
}

// value is the response object hooks get: {statusCode, headers, body}.
func (r *upstreamResponse) value() map[string]any {
	return map[string]any{"statusCode": r.status, "headers": headerArrays(r.headers), "body": r.body}
}

// httpInfo is the {status, headers} third argument of parse hooks.
func (r *upstreamResponse) httpInfo() map[string]any {
	return map[string]any{"status": r.status, "headers": headerArrays(r.headers)}
}

func headerArrays(h http.Header) map[string][]string {
	out := make(map[string][]string, len(h))
	for k, v := range h {
		out[k] = v
	}
	return out
}

// send performs a validated descriptor and reads the answer. A non-nil
// error is a transport failure: nothing usable came back.
func (s *Service) send(ctx context.Context, d *egress.Descriptor, files egress.FileResolver) (*upstreamResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.UpstreamTimeout)
	defer cancel()
	req, err := d.Request(ctx, egress.NewBudget(files, s.opts.MaxFileBytes))
	if err != nil {
		return nil, err
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("upstream %s unreachable: %w", egress.HostPort(d.URL), errors.Unwrap(err))
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxUpstreamBody))
	if err != nil {
		return nil, fmt.Errorf("reading the upstream answer from %s failed", egress.HostPort(d.URL))
	}
	out := &upstreamResponse{status: resp.StatusCode, headers: resp.Header, raw: raw, body: string(raw)}
	if v, err := DecodeJSON(raw); err == nil {
		out.body = v
	}
	return out, nil
}

// DecodeJSON parses one JSON value, keeping integers exact.
func DecodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("unexpected data after the JSON value")
	}
	return v, nil
}

// parseBase parses a channel base URL for the host policy; nil when it is
// not a URL, which then admits only allowedHosts.
func parseBase(base string) *url.URL {
	u, err := url.Parse(base)
	if err != nil || u.Host == "" {
		return nil
	}
	return u
}

// call runs a plugin hook.
func call(ctx context.Context, l *plugin.Loaded, hook string, args ...any) (any, error) {
	return l.Pool.Call(ctx, hook, args...)
}

// hookMessage is the readable, scrubbed text of a hook failure.
func hookMessage(err error, secrets []string) string {
	var he *plugin.HookError
	if errors.As(err, &he) {
		return scrub(he.Message, secrets...)
	}
	if errors.Is(err, plugin.ErrHookTimeout) {
		return "the plugin took too long to answer"
	}
	var de *egress.DescriptorError
	if errors.As(err, &de) {
		return scrub(de.Error(), secrets...)
	}
	return "the plugin failed"
}

// HookMessage is the readable text of a hook failure that saw no secrets.
func HookMessage(err error) string { return hookMessage(err, nil) }

// HookError turns the failure of a hook that saw no secrets (decoders,
// renderers) into a client error.
func HookError(status int, code string, err error) *ir.Error {
	return hookError(status, code, err, nil)
}

// hookError turns a hook failure into a client error with a scrubbed message.
func hookError(status int, code string, err error, secrets []string) *ir.Error {
	kind := ir.KindInvalidRequest
	if status >= 500 {
		kind = ir.KindUpstream
	}
	return &ir.Error{Status: status, Kind: kind, Code: code, Message: hookMessage(err, secrets), Cause: err}
}

// IDString reads an id a plugin returned as a string or a number.
func IDString(v any) string { return stringOf(v) }

// stringOf reads an id the plugin may have returned as a string or number.
func stringOf(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return ""
}
