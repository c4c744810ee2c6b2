package apijson

import (
	"encoding/json"
	"math"
	"net/http/httptest"
	"testing"
)

func TestWriteErrorAnswersTheOneShapeAsJSON(t *testing.T) {
	cases := []struct {
		name string
		e    Error
		want string
	}{
		{"plain", Error{Code: "not_found", Message: `user "x" not found`}, `{"error":{"code":"not_found","message":"user \"x\" not found"}}` + "\n"},
		{"with problems", Error{Code: "invalid_plugin", Message: "bad", Problems: []string{"a"}}, `{"error":{"code":"invalid_plugin","message":"bad","problems":["a"]}}` + "\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			WriteError(rec, 404, tc.e)
			if rec.Code != 404 || rec.Header().Get("Content-Type") != "application/json" || rec.Header().Get("Cache-Control") != "no-store" {
				t.Fatalf("status %d headers %v", rec.Code, rec.Header())
			}
			if rec.Body.String() != tc.want {
				t.Fatalf("body %s, want %s", rec.Body, tc.want)
			}
			var v map[string]map[string]any
			if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestWriteReportsAValueThatIsNotJSONBeforeWritingAnything(t *testing.T) {
	rec := httptest.NewRecorder()
	if err := Write(rec, 200, math.NaN()); err == nil {
		t.Fatal("NaN was written")
	}
	if rec.Body.Len() != 0 || rec.Header().Get("Content-Type") != "" {
		t.Fatalf("something was written: %q %v", rec.Body, rec.Header())
	}
}
