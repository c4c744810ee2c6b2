package gemini

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/turnpike-gw/turnpike/internal/protocol"
)

var _ protocol.Embedder = Codec{}

// DecodeEmbedRequest reads an :embedContent (single) or :batchEmbedContents
// body into its texts and the vector size it asks for.
func (Codec) DecodeEmbedRequest(body []byte, single bool) ([]string, int, error) {
	var texts []string
	var err error
	if single {
		texts, err = DecodeEmbedContent(body)
	} else {
		texts, _, err = DecodeBatchEmbedContents(body)
	}
	if err != nil {
		return nil, 0, err
	}
	return texts, EmbedOutputDimensionality(body), nil
}

// EncodeEmbedResponse renders the :embedContent answer (single) or the
// :batchEmbedContents one.
func (Codec) EncodeEmbedResponse(vecs [][]float64, single bool) []byte {
	if single {
		return EncodeEmbedContentResponse(vecs[0])
	}
	return EncodeBatchEmbedResponse(vecs)
}

// EmbedPassthrough sets the model of every batch request that names one.
func (Codec) EmbedPassthrough(raw []byte, model string) []byte {
	body := raw
	for i, r := range gjson.GetBytes(body, "requests").Array() {
		if r.Get("model").Exists() {
			body, _ = sjson.SetBytes(body, "requests."+strconv.Itoa(i)+".model", "models/"+StripModelPrefix(model))
		}
	}
	return body
}

// EncodeEmbedRequest builds a :batchEmbedContents body, one request per
// text, each asking for dims values when dims > 0.
func (Codec) EncodeEmbedRequest(model string, texts []string, dims int) []byte {
	body := EncodeEmbedContentRequest(model, texts)
	if dims > 0 {
		for i := range texts {
			body, _ = sjson.SetBytes(body, "requests."+strconv.Itoa(i)+".outputDimensionality", dims)
		}
	}
	return body
}

// DecodeEmbedResponse reads a batch or single embeddings answer.
func (Codec) DecodeEmbedResponse(body []byte) ([][]float64, error) {
	return DecodeBatchEmbedResponse(body)
}

// DecodeEmbedContent reads an :embedContent body. The API embeds one content
// as one vector, so its text parts are joined into a single input.
func DecodeEmbedContent(body []byte) ([]string, error) {
	root, err := parseObject(body)
	if err != nil {
		return nil, err
	}
	text, err := embedText(root, "")
	if err != nil {
		return nil, err
	}
	return []string{text}, nil
}

// DecodeBatchEmbedContents reads a :batchEmbedContents body and returns one
// text per request and each request's model (without "models/"; empty when
// the request left it out, meaning the model in the URL).
func DecodeBatchEmbedContents(body []byte) ([]string, []string, error) {
	root, err := parseObject(body)
	if err != nil {
		return nil, nil, err
	}
	reqs := root.Get("requests")
	if !present(reqs) {
		return nil, nil, badField("requests", "is required")
	}
	if err := wantArray(reqs, "requests"); err != nil {
		return nil, nil, err
	}
	var texts, models []string
	err = eachElem(reqs, func(i int, r gjson.Result) error {
		p := index("requests", i)
		if err := wantObject(r, p); err != nil {
			return err
		}
		text, err := embedText(r, p)
		texts = append(texts, text)
		models = append(models, StripModelPrefix(r.Get("model").String()))
		return err
	})
	if err == nil && len(texts) == 0 {
		err = badField("requests", "must not be empty")
	}
	if err != nil {
		return nil, nil, err
	}
	return texts, models, nil
}

// EmbedOutputDimensionality returns the requested vector size of an
// :embedContent body, or of the first request of a batch; 0 when not given.
func EmbedOutputDimensionality(body []byte) int {
	for _, p := range []string{"outputDimensionality", "output_dimensionality",
		"requests.0.outputDimensionality", "requests.0.output_dimensionality"} {
		if v := gjson.GetBytes(body, p); v.Type == gjson.Number && v.Num > 0 && v.Num <= math.MaxInt32 {
			return int(v.Num)
		}
	}
	return 0
}

func embedText(req gjson.Result, prefix string) (string, error) {
	key := "content"
	content := req.Get(key)
	if !present(content) {
		return "", badField(join(prefix, key), "is required")
	}
	p := join(prefix, key)
	if err := wantObject(content, p); err != nil {
		return "", err
	}
	_, parts, err := contentFields(content, p)
	if err != nil {
		return "", err
	}
	texts := make([]string, 0, len(parts))
	for j, ip := range parts {
		if !ip.hasText {
			return "", badField(index(join(p, "parts"), j), "only text parts can be embedded")
		}
		texts = append(texts, ip.text)
	}
	return strings.Join(texts, "\n"), nil
}

// EncodeEmbedContentResponse renders {"embedding":{"values":[...]}}.
func EncodeEmbedContentResponse(vec []float64) []byte {
	b := append([]byte(`{"embedding":`), valuesObject(nil, vec)...)
	return append(b, '}')
}

// EncodeBatchEmbedResponse renders {"embeddings":[{"values":[...]},...]}.
func EncodeBatchEmbedResponse(vecs [][]float64) []byte {
	b := []byte(`{"embeddings":[`)
	for i, v := range vecs {
		if i > 0 {
			b = append(b, ',')
		}
		b = valuesObject(b, v)
	}
	return append(b, "]}"...)
}

// valuesObject appends {"values":[...]}; the numbers are written by hand
// because a non-finite value would make encoding/json fail the whole answer.
func valuesObject(b []byte, vec []float64) []byte {
	b = append(b, `{"values":[`...)
	for i, f := range vec {
		if i > 0 {
			b = append(b, ',')
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			f = 0
		}
		b = strconv.AppendFloat(b, f, 'g', -1, 64)
	}
	return append(b, "]}"...)
}

// EncodeEmbedContentRequest builds an upstream :batchEmbedContents body, one
// request per text.
func EncodeEmbedContentRequest(model string, texts []string) []byte {
	type part struct {
		Text string `json:"text"`
	}
	type content struct {
		Parts []part `json:"parts"`
	}
	type request struct {
		Model   string  `json:"model"`
		Content content `json:"content"`
	}
	name := "models/" + StripModelPrefix(model)
	reqs := make([]request, len(texts))
	for i, t := range texts {
		reqs[i] = request{Model: name, Content: content{Parts: []part{{Text: t}}}}
	}
	b, _ := json.Marshal(struct {
		Requests []request `json:"requests"`
	}{reqs})
	return b
}

// DecodeBatchEmbedResponse reads an upstream embeddings answer, batch
// ({"embeddings":[...]}) or single ({"embedding":{...}}).
func DecodeBatchEmbedResponse(body []byte) ([][]float64, error) {
	type values struct {
		Values []float64 `json:"values"`
	}
	var w struct {
		Embeddings []values `json:"embeddings"`
		Embedding  *values  `json:"embedding"`
	}
	if err := json.Unmarshal(body, &w); err != nil {
		return nil, badUpstream(err)
	}
	if w.Embedding != nil && w.Embeddings == nil {
		return [][]float64{w.Embedding.Values}, nil
	}
	out := make([][]float64, len(w.Embeddings))
	for i, e := range w.Embeddings {
		out[i] = e.Values
	}
	return out, nil
}
