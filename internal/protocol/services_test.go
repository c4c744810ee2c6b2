package protocol_test

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol"
	"github.com/turnpike-gw/turnpike/internal/protocol/anthropic"
	"github.com/turnpike-gw/turnpike/internal/protocol/gemini"
	"github.com/turnpike-gw/turnpike/internal/protocol/openai"
	"github.com/turnpike-gw/turnpike/internal/protocol/responses"
)

var about = protocol.ModelAbout{Owner: "turnpike", Created: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)}

func TestModelCatalogShapesPerFormat(t *testing.T) {
	cases := []struct {
		name       string
		codec      protocol.Codec
		list, one  string
		idOf, want string
	}{
		{"openai", openai.Chat,
			`{"object":"list","data":[{"id":"m","object":"model","created":1704067200,"owned_by":"turnpike"}]}`,
			`{"id":"m","object":"model","created":1704067200,"owned_by":"turnpike"}`, "models/m", "models/m"},
		{"messages-native", anthropic.Messages,
			`{"data":[{"type":"model","id":"m","display_name":"m","created_at":"2024-01-01T00:00:00Z"}],"has_more":false,"first_id":"m","last_id":"m"}`,
			`{"type":"model","id":"m","display_name":"m","created_at":"2024-01-01T00:00:00Z"}`, "models/m", "models/m"},
		{"alternate-native", gemini.Generate,
			`{"models":[{"name":"models/m","displayName":"m","supportedGenerationMethods":["generateContent","countTokens"]}],"nextPageToken":""}`,
			`{"name":"models/m","displayName":"m","supportedGenerationMethods":["generateContent","countTokens"]}`, "models/m", "m"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			list, err := tc.codec.ListModels([]string{"m"}, about, url.Values{}, http.Header{})
			if err != nil || string(list) != tc.list {
				t.Errorf("list = %s, %v; want %s", list, err, tc.list)
			}
			if one := tc.codec.DescribeModel("m", about); string(one) != tc.one {
				t.Errorf("model = %s; want %s", one, tc.one)
			}
			if got := tc.codec.ModelID(tc.idOf); got != tc.want {
				t.Errorf("ModelID(%q) = %q; want %q", tc.idOf, got, tc.want)
			}
		})
	}
}

func TestAlternateNativeListPagesAndRefusesBadParameters(t *testing.T) {
	ids := []string{"a", "b", "c"}
	first, err := gemini.Generate.ListModels(ids, about, url.Values{"pageSize": {"2"}}, http.Header{})
	if err != nil {
		t.Fatal(err)
	}
	tok := gemini.EncodePageToken(2)
	if want := `{"models":[{"name":"models/a","displayName":"a","supportedGenerationMethods":["generateContent","countTokens"]},{"name":"models/b","displayName":"b","supportedGenerationMethods":["generateContent","countTokens"]}],"nextPageToken":"` + tok + `"}`; string(first) != want {
		t.Errorf("first page = %s", first)
	}
	google := http.Header{"X-Goog-Api-Client": {"google-genai-sdk/1.0"}}
	last, err := gemini.Generate.ListModels(ids, about, url.Values{"pageSize": {"2"}, "pageToken": {tok}}, google)
	if err != nil || string(last) != `{"models":[{"name":"models/c","displayName":"c","supportedGenerationMethods":["generateContent","countTokens"]}]}` {
		t.Errorf("last page for a Google client = %s, %v", last, err)
	}
	for q, code := range map[string]string{"pageSize=-1": "invalid_page_size", "pageToken=x": "invalid_page_token"} {
		v, _ := url.ParseQuery(q)
		_, err := gemini.Generate.ListModels(ids, about, v, http.Header{})
		if e := ir.As(err); e == nil || e.Status != 400 || e.Code != code {
			t.Errorf("%s: err = %v; want a 400 %s", q, err, code)
		}
	}
}

func TestAlternateNativeEmbedderCarriesTheVectorSize(t *testing.T) {
	var em protocol.Embedder = gemini.Generate
	texts, dims, err := em.DecodeEmbedRequest([]byte(`{"content":{"parts":[{"text":"a"},{"text":"b"}]},"outputDimensionality":8}`), true)
	if err != nil || len(texts) != 1 || texts[0] != "a\nb" || dims != 8 {
		t.Errorf("single = %q, %d, %v", texts, dims, err)
	}
	body := em.EncodeEmbedRequest("models/m", []string{"x"}, 4)
	if want := `{"requests":[{"model":"models/m","content":{"parts":[{"text":"x"}]},"outputDimensionality":4}]}`; string(body) != want {
		t.Errorf("upstream body = %s; want %s", body, want)
	}
	raw := []byte(`{"requests":[{"model":"models/a","content":{"parts":[{"text":"x"}]}}]}`)
	if got := em.EmbedPassthrough(raw, "b"); string(got) != `{"requests":[{"model":"models/b","content":{"parts":[{"text":"x"}]}}]}` {
		t.Errorf("passthrough = %s", got)
	}
	if string(raw) != `{"requests":[{"model":"models/a","content":{"parts":[{"text":"x"}]}}]}` {
		t.Errorf("the client body was modified: %s", raw)
	}
	if got := em.EncodeEmbedResponse([][]float64{{1, 2}}, true); string(got) != `{"embedding":{"values":[1,2]}}` {
		t.Errorf("single answer = %s", got)
	}
}

func TestResponsesAPIReadsIdsAndCreatedEvents(t *testing.T) {
	var api protocol.ResponsesAPI = responses.API
	created := []byte(`{"type":"response.created","response":{"id":"resp_1"}}`)
	if !api.CreatedEvent("", created) || api.CreatedEvent("", []byte(`{"type":"response.in_progress","response":{"id":"resp_1"}}`)) {
		t.Error("CreatedEvent does not tell response.created from the others")
	}
	if id := api.ResponseID(created); id != "resp_1" {
		t.Errorf("ResponseID = %q", id)
	}
	conv, err := api.DecodeRequest([]byte(`{"model":"m","input":"hi"}`))
	if err != nil || conv.Call().Model != "m" {
		t.Fatalf("DecodeRequest = %v, %v", conv, err)
	}
	if _, err := api.DecodeRequest([]byte(`[]`)); err == nil {
		t.Error("a non-object body was accepted")
	}
}
