package gemini

import (
	"reflect"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/ir"
)

func TestDecodeCountTokensRequest(t *testing.T) {
	direct, err := DecodeCountTokensRequest([]byte(`{"contents":[{"parts":[{"text":"How many tokens?"}]}]}`))
	if err != nil || len(direct.Messages) != 1 || direct.Model != "" {
		t.Fatalf("direct form: %+v %v", direct, err)
	}
	wrapped, err := DecodeCountTokensRequest([]byte(`{"generateContentRequest":{"model":"models/gemini-2.5-flash",
		"contents":[{"parts":[{"text":"hi"}]}],"systemInstruction":{"parts":[{"text":"sys"}]}}}`))
	if err != nil || wrapped.Model != "gemini-2.5-flash" || len(wrapped.System) != 1 {
		t.Fatalf("wrapped form: %+v %v", wrapped, err)
	}
	_, err = DecodeCountTokensRequest([]byte(`{"generateContentRequest":{"contents":[]}}`))
	if e := asIRError(t, err); e.Param != "generateContentRequest.contents" {
		t.Errorf("param = %q", e.Param)
	}
	if got := string(EncodeCountTokensResponse(31)); got != `{"totalTokens":31}` {
		t.Errorf("response = %s", got)
	}
}

func TestEmbeddingDecoders(t *testing.T) {
	texts, err := DecodeEmbedContent([]byte(`{"model":"models/text-embedding-004","content":{"parts":[{"text":"Hello"},{"text":"world"}]},"taskType":"RETRIEVAL_QUERY","outputDimensionality":256}`))
	if err != nil || !reflect.DeepEqual(texts, []string{"Hello\nworld"}) {
		t.Errorf("single: %q %v", texts, err)
	}
	if n := EmbedOutputDimensionality([]byte(`{"content":{},"outputDimensionality":256}`)); n != 256 {
		t.Errorf("dimensionality = %d", n)
	}
	texts, models, err := DecodeBatchEmbedContents([]byte(`{"requests":[
		{"model":"models/text-embedding-004","content":{"parts":[{"text":"a"}]}},
		{"content":{"parts":[{"text":"b"}]},"output_dimensionality":8}]}`))
	if err != nil || !reflect.DeepEqual(texts, []string{"a", "b"}) || !reflect.DeepEqual(models, []string{"text-embedding-004", ""}) {
		t.Errorf("batch: %q %q %v", texts, models, err)
	}
	bad := []struct {
		name, body, param string
		batch             bool
	}{
		{"content missing", `{"model":"m"}`, "content", false},
		{"image part", `{"content":{"parts":[{"inlineData":{"mimeType":"image/png","data":"AA=="}}]}}`, "content.parts[0]", false},
		{"batch without requests", `{}`, "requests", true},
		{"batch request without content", `{"requests":[{"model":"m"}]}`, "requests[0].content", true},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			if tt.batch {
				_, _, err = DecodeBatchEmbedContents([]byte(tt.body))
			} else {
				_, err = DecodeEmbedContent([]byte(tt.body))
			}
			if e := asIRError(t, err); e.Status != 400 || e.Param != tt.param {
				t.Errorf("got %d %q", e.Status, e.Param)
			}
		})
	}
}

func TestEmbeddingEncoders(t *testing.T) {
	if got := string(EncodeEmbedContentResponse([]float64{0.5, -1e-7, 3})); got != `{"embedding":{"values":[0.5,-1e-07,3]}}` {
		t.Errorf("single = %s", got)
	}
	if got := string(EncodeBatchEmbedResponse([][]float64{{1}, {}})); got != `{"embeddings":[{"values":[1]},{"values":[]}]}` {
		t.Errorf("batch = %s", got)
	}
	want := `{"requests":[{"model":"models/text-embedding-004","content":{"parts":[{"text":"a"}]}},{"model":"models/text-embedding-004","content":{"parts":[{"text":"b"}]}}]}`
	if got := string(EncodeEmbedContentRequest("models/text-embedding-004", []string{"a", "b"})); got != want {
		t.Errorf("request = %s", got)
	}
	vecs, err := DecodeBatchEmbedResponse([]byte(`{"embeddings":[{"values":[0.1,0.2]},{"values":[0.3]}]}`))
	if err != nil || !reflect.DeepEqual(vecs, [][]float64{{0.1, 0.2}, {0.3}}) {
		t.Errorf("batch response: %v %v", vecs, err)
	}
	vecs, err = DecodeBatchEmbedResponse([]byte(`{"embedding":{"values":[1,2]}}`))
	if err != nil || !reflect.DeepEqual(vecs, [][]float64{{1, 2}}) {
		t.Errorf("single response: %v %v", vecs, err)
	}
	if _, err := DecodeBatchEmbedResponse([]byte(`nope`)); err == nil {
		t.Error("accepted a malformed answer")
	}
}

func TestModelList(t *testing.T) {
	models := []ModelInfo{
		{ID: "gemini-2.5-flash", Version: "001", DisplayName: "Gemini 2.5 Flash", InputTokenLimit: 1048576, OutputTokenLimit: 65536},
		{ID: "models/text-embedding-004", SupportedGenerationMethods: []string{"embedContent"}},
	}
	want := `{"models":[{"name":"models/gemini-2.5-flash","version":"001","displayName":"Gemini 2.5 Flash","inputTokenLimit":1048576,"outputTokenLimit":65536,"supportedGenerationMethods":["generateContent","countTokens"]},` +
		`{"name":"models/text-embedding-004","displayName":"text-embedding-004","supportedGenerationMethods":["embedContent"]}],"nextPageToken":"bzoy"}`
	if got := string(EncodeModelList(models, EncodePageToken(2))); got != want {
		t.Errorf("list = %s", got)
	}
	if got := string(EncodeModelList(nil, "")); got != `{"models":[],"nextPageToken":""}` {
		t.Errorf("the last page must carry an empty nextPageToken: %s", got)
	}
	if got := string(EncodeModel(models[0])); got[:33] != `{"name":"models/gemini-2.5-flash"` {
		t.Errorf("model = %s", got)
	}
}

func TestPageTokens(t *testing.T) {
	for _, n := range []int{0, 1, 50, 123456} {
		got, err := DecodePageToken(EncodePageToken(n))
		if err != nil || got != n {
			t.Errorf("round trip %d: %d %v", n, got, err)
		}
	}
	if n, err := DecodePageToken(""); n != 0 || err != nil {
		t.Errorf("empty token: %d %v", n, err)
	}
	for _, bad := range []string{"!!", "MTA", EncodePageToken(-1), "bzp4", EncodePageToken(maxPageOffset + 1)} {
		_, err := DecodePageToken(bad)
		if e := asIRError(t, err); e.Status != 400 || e.Param != "pageToken" {
			t.Errorf("%q: got %d %q", bad, e.Status, e.Param)
		}
	}
}

func TestStripModelPrefix(t *testing.T) {
	for in, want := range map[string]string{"models/gemini-2.5-pro": "gemini-2.5-pro", "gemini-2.5-pro": "gemini-2.5-pro", "": ""} {
		if got := StripModelPrefix(in); got != want {
			t.Errorf("StripModelPrefix(%q) = %q", in, got)
		}
	}
}

func TestCheckConvertible(t *testing.T) {
	base := `"contents":[{"parts":[{"text":"a"}]}]`
	tests := []struct{ name, body, param string }{
		{"plain function tools convert", `{` + base + `,"tools":[{"functionDeclarations":[{"name":"f"}]}],"safetySettings":[{}]}`, ""},
		{"search grounding does not", `{` + base + `,"tools":[{"functionDeclarations":[]},{"googleSearch":{}}]}`, "tools[1].googleSearch"},
		{"code execution does not", `{` + base + `,"tools":[{"code_execution":{}}]}`, "tools[0].code_execution"},
		{"cached content does not", `{` + base + `,"cachedContent":"cachedContents/abc"}`, "cachedContent"},
		{"image output does not", `{` + base + `,"generationConfig":{"responseModalities":["TEXT","IMAGE"]}}`, "generationConfig.responseModalities[1]"},
		{"enum output does not", `{` + base + `,"generationConfig":{"responseMimeType":"text/x.enum"}}`, "generationConfig.responseMimeType"},
		{"speech does not", `{` + base + `,"generationConfig":{"speechConfig":{}}}`, "generationConfig.speechConfig"},
		{"executable code parts do not", `{"contents":[{"role":"model","parts":[{"text":"x"},{"executableCode":{"language":"PYTHON","code":"1"}}]}]}`, "contents[0].parts[1].executableCode"},
		{"JSON output converts", `{` + base + `,"generationConfig":{"responseMimeType":"application/json"}}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckConvertible([]byte(tt.body))
			if tt.param == "" {
				if err != nil {
					t.Fatalf("unexpected %v", err)
				}
				return
			}
			if e := asIRError(t, err); e.Status != 400 || e.Param != tt.param || e.Kind != ir.KindInvalidRequest {
				t.Errorf("got %d %q", e.Status, e.Param)
			}
		})
	}
}
