package books

import (
	"strings"
	"testing"
	"time"
)

// A provider's usage export is uploaded by an operator from anywhere:
// reading one never panics, and every line it accepts has its figures.
func FuzzParseProviderCSV(f *testing.F) {
	f.Add("date,model,requests,input_tokens,output_tokens,cost_usd\n2026-11-01,gpt-4o,10,1000,500,0.0125\n")
	f.Add("date,model,requests,input_tokens,output_tokens,cost_usd\n2026-11-01,gpt-4o,10,1000,500,\n")
	f.Add("date,model\n\"unterminated\n")
	f.Add("")
	f.Fuzz(func(t *testing.T, csv string) {
		lines, err := ParseProviderCSV(strings.NewReader(csv))
		if err != nil {
			return
		}
		for k, u := range lines {
			if u == nil {
				t.Fatalf("line %v accepted without figures", k)
			}
		}
	})
}

// Report windows come from query strings: reading one never panics, and a
// window it accepts does not end before it starts.
func FuzzParseWindow(f *testing.F) {
	f.Add("2026-11-01T00:00:00Z", "2026-11-02T00:00:00Z")
	f.Add("1795000000", "")
	f.Add("", "")
	f.Add("-99999999999999999999", "x")
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, since, until string) {
		w, err := ParseWindow(since, until, now)
		if err != nil {
			return
		}
		if w.Until.Before(w.Since) {
			t.Fatalf("window %v – %v accepted", w.Since, w.Until)
		}
	})
}
