package gemini

import (
	"strconv"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol"
)

var _ protocol.TokenCounter = Codec{}

// DecodeCountTokens reads a :countTokens body (DecodeCountTokensRequest).
func (Codec) DecodeCountTokens(body []byte) (*ir.Request, error) {
	return DecodeCountTokensRequest(body)
}

// EncodeCountTokens renders {"totalTokens": N}.
func (Codec) EncodeCountTokens(total int) []byte { return EncodeCountTokensResponse(total) }

// DecodeCountTokensRequest reads a :countTokens body, which holds either
// contents directly or a whole generateContentRequest (whose model, if any,
// is returned without its "models/" prefix).
func DecodeCountTokensRequest(body []byte) (*ir.Request, error) {
	root, err := parseObject(body)
	if err != nil {
		return nil, err
	}
	for _, key := range []string{"generateContentRequest", "generate_content_request"} {
		g := root.Get(key)
		if !present(g) {
			continue
		}
		if err := wantObject(g, key); err != nil {
			return nil, err
		}
		req, err := decodeGenerate(g, key)
		if err != nil {
			return nil, err
		}
		req.Model = StripModelPrefix(g.Get("model").String())
		return req, nil
	}
	return decodeGenerate(root, "")
}

// EncodeCountTokensResponse renders {"totalTokens": N}.
func EncodeCountTokensResponse(total int) []byte {
	return []byte(`{"totalTokens":` + strconv.Itoa(max(total, 0)) + `}`)
}
