package openai

import (
	"bytes"
	"testing"
)

func TestScanNameAgreesWithSearchingTheQuotedName(t *testing.T) {
	tests := []struct {
		name  string
		data  string
		found bool
		null  bool
	}{
		{"a content chunk", chunk(`{"content":"hi"}`, ""), true, true},
		{"a finish chunk", chunk(`{}`, "stop"), true, false},
		{"no such name", `{"choices":[]}`, false, false},
		{"the name without its opening quote", `{"xfinish_reason":null}`, false, false},
		{"the name at the very start", `finish_reason":null`, false, false},
		{"the name as the last bytes", `{"a":"finish_reason"`, true, false},
		{"null after a second occurrence", `{"finish_reason":"stop","x":{"finish_reason":null}}`, true, true},
		{"null with a space is not the short form", `{"finish_reason": null}`, true, false},
		{"an unquoted lookalike before the real one", `{"content":"finish_reason\"","finish_reason":null}`, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := []byte(tt.data)
			found, null := scanName(data, finishReasonBare)
			if found != tt.found || null != tt.null {
				t.Errorf("scanName = %v, %v; want %v, %v", found, null, tt.found, tt.null)
			}
			// The rule it replaced: the quoted name anywhere, and the
			// quoted name followed by :null anywhere.
			if want := bytes.Contains(data, []byte(`"finish_reason"`)); found != want {
				t.Errorf("found = %v; searching the quoted name says %v", found, want)
			}
			if want := bytes.Contains(data, []byte(`"finish_reason":null`)); null != want {
				t.Errorf("null = %v; searching the quoted name and :null says %v", null, want)
			}
		})
	}
}

func FuzzScanNameAgreesWithSearchingTheQuotedName(f *testing.F) {
	f.Add([]byte(chunk(`{"content":"hi"}`, "")))
	f.Add([]byte(`"usage":null,"finish_reason""finish_reason":null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, bare := range [][]byte{finishReasonBare, usageBare} {
			quoted := append([]byte{'"'}, bare...)
			found, null := scanName(data, bare)
			if want := bytes.Contains(data, quoted); found != want {
				t.Fatalf("%q in %q: found %v, want %v", quoted, data, found, want)
			}
			if want := bytes.Contains(data, append(quoted, nullValue...)); null != want {
				t.Fatalf("%q:null in %q: null %v, want %v", quoted, data, null, want)
			}
		}
	})
}

func BenchmarkStreamEndsOnContentChunk(b *testing.B) {
	data := []byte(chunk(`{"content":"Hello there, this is a typical token"}`, ""))
	for b.Loop() {
		Chat.StreamEnds("", data)
	}
}
