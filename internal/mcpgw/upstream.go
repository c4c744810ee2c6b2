package mcpgw

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/turnpike-gw/turnpike/internal/protocol/sse"
)

// The SDK's client cannot take up a session another process opened (its
// session id is set only by its own initialize), and a session here lives
// in its sealed id, not in a node. So requests to an upstream within a
// client's session are single Streamable HTTP exchanges with the upstream
// session id the sealed id carries; the SDK's jsonrpc package encodes and
// decodes every message. The node-wide session that watches a server's
// tool list is the SDK's own client (tools.go).

// upstreamVersion is the protocol version the gateway asks upstreams for;
// an upstream may agree on an older one, which is then sent with each of
// its requests.
const upstreamVersion = "2025-06-18"

// maxUpstreamMessage bounds one message from an upstream.
const maxUpstreamMessage = 16 << 20

// upstreamError is an upstream that failed or timed out: the client is told
// which server, and the call is refunded.
type upstreamError struct {
	server string
	msg    string
	// gone is an upstream that no longer knows the session (HTTP 404).
	gone bool
}

func (e *upstreamError) Error() string { return "MCP server " + e.server + " " + e.msg }

// upstream makes exchanges with registered servers.
type upstream struct {
	client *http.Client
	// version is the gateway's, sent as clientInfo.version.
	version string
	// node and seq make request ids unique within an upstream session
	// that several nodes and requests share: a server refuses an id that
	// is still in flight (a call the gateway gave up on).
	node string
	seq  atomic.Int64
}

func (u *upstream) nextID() jsonrpc.ID {
	id, _ := jsonrpc.MakeID(fmt.Sprintf("turnpike-%s-%d", u.node, u.seq.Add(1)))
	return id
}

// note is a message from an upstream that is not the answer: a
// notification (progress, list changes) or a request of its own.
type note func(*jsonrpc.Request)

// call sends one request within us and returns its answer. An upstream's
// JSON-RPC error comes back as the error value (*jsonrpc.Error); a broken
// exchange as *upstreamError.
func (u *upstream) call(ctx context.Context, s *server, us upSession, method string, params any, onNote note) (json.RawMessage, error) {
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	id := u.nextID()
	resp, _, err := u.post(ctx, s, us, &jsonrpc.Request{ID: id, Method: method, Params: raw}, onNote)
	if err != nil {
		if ctx.Err() != nil {
			u.cancel(s, us, id)
		}
		return nil, err
	}
	if resp.Error != nil {
		var we *jsonrpc.Error
		if errors.As(resp.Error, &we) {
			return nil, we
		}
		return nil, &upstreamError{server: s.Name, msg: "answered an error: " + resp.Error.Error()}
	}
	return resp.Result, nil
}

// initialize opens an upstream session: initialize, then
// notifications/initialized.
func (u *upstream) initialize(ctx context.Context, s *server) (upSession, error) {
	params := map[string]any{"protocolVersion": upstreamVersion, "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "turnpike", "version": u.version}}
	raw, _ := json.Marshal(params)
	resp, h, err := u.post(ctx, s, upSession{}, &jsonrpc.Request{ID: u.nextID(), Method: "initialize", Params: raw}, nil)
	if err != nil {
		return upSession{}, err
	}
	if resp.Error != nil {
		return upSession{}, &upstreamError{server: s.Name, msg: "refused initialize: " + resp.Error.Error()}
	}
	var res struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if err := json.Unmarshal(resp.Result, &res); err != nil || res.ProtocolVersion == "" {
		return upSession{}, &upstreamError{server: s.Name, msg: "answered initialize without a protocol version"}
	}
	us := upSession{ID: h.Get("Mcp-Session-Id"), Version: res.ProtocolVersion}
	if _, _, err := u.post(ctx, s, us, &jsonrpc.Request{Method: "notifications/initialized"}, nil); err != nil {
		return upSession{}, err
	}
	return us, nil
}

// cancel tells the upstream that the gateway gave up on request id (a
// timeout, a client that left), so it stops the work nobody waits for.
func (u *upstream) cancel(s *server, us upSession, id jsonrpc.ID) {
	params, _ := json.Marshal(map[string]any{"requestId": id.Raw(), "reason": "the gateway stopped waiting"})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, _, _ = u.post(ctx, s, us, &jsonrpc.Request{Method: "notifications/cancelled", Params: params}, nil)
}

// end closes an upstream session (DELETE); an upstream that keeps none, or
// does not allow it, is left alone.
func (u *upstream) end(ctx context.Context, s *server, us upSession) {
	if us.ID == "" {
		return
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, s.URL, nil)
	if err != nil {
		return
	}
	u.headers(req, s, us)
	if resp, err := u.client.Do(req); err == nil {
		resp.Body.Close()
	}
}

func (u *upstream) headers(req *http.Request, s *server, us upSession) {
	for k, v := range s.Headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	if us.ID != "" {
		req.Header.Set("Mcp-Session-Id", us.ID)
	}
	if us.Version != "" {
		req.Header.Set("Mcp-Protocol-Version", us.Version)
	}
}

// post sends msg and reads the answer to it, as JSON or from an event
// stream whose other messages go to onNote. A notification's answer is
// nil.
func (u *upstream) post(ctx context.Context, s *server, us upSession, msg *jsonrpc.Request, onNote note) (*jsonrpc.Response, http.Header, error) {
	body, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return nil, nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL, bytes.NewReader(body))
	if err != nil {
		return nil, nil, &upstreamError{server: s.Name, msg: "has an unusable address"}
	}
	u.headers(req, s, us)
	req.Header.Set("Content-Type", "application/json")
	resp, err := u.client.Do(req)
	if err != nil {
		return nil, nil, u.transportError(ctx, s, err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound && us.ID != "":
		return nil, nil, &upstreamError{server: s.Name, msg: "no longer knows the session", gone: true}
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		return nil, nil, &upstreamError{server: s.Name, msg: fmt.Sprintf("answered HTTP %d", resp.StatusCode)}
	case !msg.IsCall():
		return nil, resp.Header, nil
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	var answer *jsonrpc.Response
	if ct == "text/event-stream" {
		answer, err = readStream(resp.Body, msg.ID, onNote)
	} else {
		answer, err = readJSON(resp.Body, msg.ID)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, u.transportError(ctx, s, ctx.Err())
		}
		return nil, nil, &upstreamError{server: s.Name, msg: err.Error()}
	}
	return answer, resp.Header, nil
}

func (u *upstream) transportError(ctx context.Context, s *server, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) {
		return &upstreamError{server: s.Name, msg: "timed out"}
	}
	return &upstreamError{server: s.Name, msg: "could not be reached"}
}

func readJSON(r io.Reader, id jsonrpc.ID) (*jsonrpc.Response, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxUpstreamMessage+1))
	if err != nil {
		return nil, errors.New("broke off its answer")
	}
	if len(b) > maxUpstreamMessage {
		return nil, errors.New("answered more than the gateway accepts")
	}
	m, err := jsonrpc.DecodeMessage(b)
	if resp, ok := m.(*jsonrpc.Response); err == nil && ok && resp.ID == id {
		return resp, nil
	}
	return nil, errors.New("answered something other than a JSON-RPC answer")
}

// readStream reads an event stream until the answer to id, handing every
// other message to onNote.
func readStream(r io.Reader, id jsonrpc.ID, onNote note) (*jsonrpc.Response, error) {
	sr := sse.NewReader(r, maxUpstreamMessage)
	defer sr.Release()
	for {
		_, data, err := sr.NextEvent()
		if err != nil {
			return nil, errors.New("ended its event stream without an answer")
		}
		if len(bytes.TrimSpace(data)) == 0 {
			continue // a priming event (SEP-1699) carries no message
		}
		m, err := jsonrpc.DecodeMessage(data)
		if err != nil {
			return nil, errors.New("sent an event that is not a JSON-RPC message")
		}
		switch m := m.(type) {
		case *jsonrpc.Response:
			if m.ID == id {
				return m, nil
			}
		case *jsonrpc.Request:
			if onNote != nil {
				onNote(m)
			}
		}
	}
}
