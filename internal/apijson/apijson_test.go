package apijson

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestErrorWritesTheEnvelopeAsJSON(t *testing.T) {
	// Quotes, control characters and non-ASCII must come out as JSON escapes,
	// not Go's %q forms (\x01, \u00e9 spelled differently), or clients fail
	// to parse the body.
	msg := "bad \"name\" \x01 é </script>"
	rec := httptest.NewRecorder()
	Error(rec, http.StatusForbidden, "forbidden", msg)
	if rec.Code != http.StatusForbidden {
		t.Fatalf("status %d", rec.Code)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type %q", ct)
	}
	if cc := rec.Header().Get("Cache-Control"); cc != "no-store" {
		t.Fatalf("Cache-Control %q", cc)
	}
	var got Envelope
	dec := json.NewDecoder(bytes.NewReader(rec.Body.Bytes()))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("body %q: %v", rec.Body.String(), err)
	}
	if got.Error.Code != "forbidden" || got.Error.Message != msg {
		t.Fatalf("decoded %+v", got)
	}
	if bytes.Contains(rec.Body.Bytes(), []byte("problems")) {
		t.Fatalf("empty problems must be absent: %s", rec.Body.String())
	}
}

func TestWriteOfAnUnencodableValueIsAnEnvelopedServerError(t *testing.T) {
	rec := httptest.NewRecorder()
	Write(rec, http.StatusOK, map[string]float64{"x": math.NaN()})
	if rec.Code != http.StatusInternalServerError {
		t.Fatalf("status %d, body %s", rec.Code, rec.Body.String())
	}
	var got Envelope
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || got.Error.Code != "internal_error" {
		t.Fatalf("body %s: %v", rec.Body.String(), err)
	}
}

func TestEncodeFailureWritesNothing(t *testing.T) {
	rec := httptest.NewRecorder()
	if err := Encode(rec, http.StatusOK, make(chan int)); err == nil {
		t.Fatal("a channel encoded")
	}
	if rec.Body.Len() != 0 || len(rec.Header()) != 0 {
		t.Fatalf("wrote %q with headers %v", rec.Body.String(), rec.Header())
	}
}

func TestWriteErrorKeepsProblems(t *testing.T) {
	rec := httptest.NewRecorder()
	WriteError(rec, http.StatusBadRequest, Detail{Code: "invalid_plugin", Message: "refused", Problems: []map[string]string{{"path": "meta.key", "message": "is missing"}}})
	var got struct {
		Error struct {
			Problems []map[string]string `json:"problems"`
		} `json:"error"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || len(got.Error.Problems) != 1 || got.Error.Problems[0]["path"] != "meta.key" {
		t.Fatalf("body %s: %v", rec.Body.String(), err)
	}
}
