package openai

import "testing"

// BenchmarkDecodeChatRequest decodes the body every regular call of the
// load tool (internal/loadtest) sends, as the relay does once per call.
func BenchmarkDecodeChatRequest(b *testing.B) {
	body := []byte(`{"model":"bench-model","messages":[{"role":"user","content":"Say hello in a few words."}]}`)
	b.ReportAllocs()
	for b.Loop() {
		req, err := decodeRequest(body)
		if err != nil || req.Model != "bench-model" || len(req.Messages) != 1 {
			b.Fatalf("decoded %+v, %v", req, err)
		}
	}
}

// TestADecodedRequestSeesOnlyItsOwnMembers decodes bodies one after the
// other, as calls reuse the pooled member index: a member of an earlier
// body must never answer for a later body that lacks it.
func TestADecodedRequestSeesOnlyItsOwnMembers(t *testing.T) {
	bodies := []struct {
		body        string
		model       string
		temperature bool
	}{
		{body: `{"model":"first","messages":[{"role":"user","content":"a"}],"temperature":1.5,"top_p":0.5}`, model: "first", temperature: true},
		{body: `{"model":"second","messages":[{"role":"user","content":"b"}]}`, model: "second", temperature: false},
		{body: `{"messages":[{"role":"user","content":"c"}],"model":"third","temperature":0}`, model: "third", temperature: true},
		{body: `{"model":"fourth","messages":[{"role":"user","content":"d"}]}`, model: "fourth", temperature: false},
	}
	for range 3 {
		for _, tc := range bodies {
			req, err := decodeRequest([]byte(tc.body))
			if err != nil {
				t.Fatalf("%s: %v", tc.body, err)
			}
			if req.Model != tc.model || (req.Temperature != nil) != tc.temperature {
				t.Errorf("%s: model %q, temperature set %v; want %q, %v", tc.body, req.Model, req.Temperature != nil, tc.model, tc.temperature)
			}
			if !tc.temperature && req.TopP != nil {
				t.Errorf("%s: top_p set from an earlier body", tc.body)
			}
		}
	}
}
