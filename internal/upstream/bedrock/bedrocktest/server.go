package bedrocktest

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
)

// Call is one Converse, ConverseStream or InvokeModel request the fake
// accepted.
type Call struct {
	// Model is the {modelId} of the path, unescaped.
	Model string
	// Action is the path's last segment: converse, converse-stream or
	// invoke.
	Action string
	Stream bool
	Body   []byte
	Header http.Header
}

// Event is one frame of a scripted stream: an event (Type is its
// :event-type) or, with Exception, an exception frame (Type is its
// :exception-type).
type Event struct {
	Type      string
	Payload   string
	Exception bool
}

// Reply is a scripted answer: an error (Status ≥ 300 with ErrorType sent
// as x-amzn-ErrorType and JSON as the body), a Converse answer (JSON), or
// a stream (Events).
type Reply struct {
	Status    int
	ErrorType string
	JSON      string
	Events    []Event
}

// Server is the fake Bedrock Runtime and control plane.
type Server struct {
	*httptest.Server
	Creds Credentials
	// Models answers GET /foundation-models.
	Models []string
	// Profiles answers GET /inference-profiles, two per page.
	Profiles []string

	reply func(Call) Reply
	mu    sync.Mutex
	calls []Call
	// refused counts requests refused for their credentials or signature.
	refused int
}

// New starts a fake Bedrock that accepts creds and answers each accepted
// call with reply.
func New(t testing.TB, creds Credentials, reply func(Call) Reply) *Server {
	s := &Server{Creds: creds, reply: reply}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// Calls are the accepted calls so far.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

// Refused is how many requests were refused for their credentials.
func (s *Server) Refused() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refused
}

func writeError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-Errortype", typ+":http://internal.amazon.com/coral/com.amazon.bedrock/")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]string{"message": msg})
	_, _ = w.Write(b)
}

func (s *Server) authenticate(r *http.Request, body []byte) error {
	if key, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		if s.Creds.APIKey == "" || key != s.Creds.APIKey {
			return &signingError{"UnrecognizedClientException", "Invalid API Key format: Must start with pre-defined prefix"}
		}
		return nil
	}
	return s.Creds.VerifySigV4(r, body, time.Now())
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if err := s.authenticate(r, body); err != nil {
		s.mu.Lock()
		s.refused++
		s.mu.Unlock()
		var se *signingError
		errors.As(err, &se)
		status := http.StatusForbidden
		writeError(w, status, se.typ, se.msg)
		return
	}
	if r.Method == http.MethodGet && r.URL.Path == "/foundation-models" {
		var sums []map[string]any
		for _, m := range s.Models {
			sums = append(sums, map[string]any{"modelId": m, "outputModalities": []string{"TEXT"}})
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"modelSummaries": sums})
		return
	}
	if r.Method == http.MethodGet && r.URL.Path == "/inference-profiles" {
		start, _ := strconv.Atoi(r.URL.Query().Get("nextToken"))
		start = min(max(start, 0), len(s.Profiles))
		end := min(start+2, len(s.Profiles))
		var sums []map[string]any
		for _, p := range s.Profiles[start:end] {
			sums = append(sums, map[string]any{"inferenceProfileId": p, "type": "SYSTEM_DEFINED"})
		}
		page := map[string]any{"inferenceProfileSummaries": sums}
		if end < len(s.Profiles) {
			page["nextToken"] = strconv.Itoa(end)
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(page)
		return
	}
	call, ok := parsePath(r)
	if !ok || r.Method != http.MethodPost {
		writeError(w, http.StatusNotFound, "UnknownOperationException", "")
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		writeError(w, http.StatusBadRequest, "SerializationException", "Content-Type must be application/json")
		return
	}
	if !json.Valid(body) {
		writeError(w, http.StatusBadRequest, "SerializationException", "body is not JSON")
		return
	}
	call.Body, call.Header = body, r.Header.Clone()
	s.mu.Lock()
	s.calls = append(s.calls, call)
	s.mu.Unlock()
	rep := s.reply(call)
	switch {
	case rep.Status >= 300:
		writeError(w, rep.Status, rep.ErrorType, rep.JSON)
	case call.Stream:
		writeStream(w, rep.Events)
	default:
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, rep.JSON)
	}
}

// parsePath reads /model/{modelId}/{converse,converse-stream,invoke} from
// the path as sent, where the model id is one escaped segment.
func parsePath(r *http.Request) (Call, bool) {
	rest, ok := strings.CutPrefix(r.URL.EscapedPath(), "/model/")
	if !ok {
		return Call{}, false
	}
	id, action, ok := strings.Cut(rest, "/")
	if !ok || (action != "converse" && action != "converse-stream" && action != "invoke") {
		return Call{}, false
	}
	model, err := url.PathUnescape(id)
	if err != nil || model == "" {
		return Call{}, false
	}
	return Call{Model: model, Action: action, Stream: action == "converse-stream"}, true
}

// writeStream writes the events as AWS event-stream frames, flushing each.
func writeStream(w http.ResponseWriter, events []Event) {
	w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
	w.Header().Set("X-Amzn-Bedrock-Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	enc := eventstream.NewEncoder()
	fl, _ := w.(http.Flusher)
	for _, ev := range events {
		if err := enc.Encode(w, Frame(ev)); err != nil {
			return
		}
		if fl != nil {
			fl.Flush()
		}
	}
}

// Frame is the event-stream message of one scripted event.
func Frame(ev Event) eventstream.Message {
	var h eventstream.Headers
	if ev.Exception {
		h.Set(":message-type", eventstream.StringValue("exception"))
		h.Set(":exception-type", eventstream.StringValue(ev.Type))
	} else {
		h.Set(":message-type", eventstream.StringValue("event"))
		h.Set(":event-type", eventstream.StringValue(ev.Type))
	}
	h.Set(":content-type", eventstream.StringValue("application/json"))
	return eventstream.Message{Headers: h, Payload: []byte(ev.Payload)}
}
