package openai

import (
	"net/http"
	"net/url"
	"strconv"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol"
)

var _ protocol.ModelCatalog = ChatCodec{}

// ListModels renders GET /v1/models: every model on one page.
func (ChatCodec) ListModels(ids []string, about protocol.ModelAbout, _ url.Values, _ http.Header) ([]byte, error) {
	return EncodeModelList(ids, about.Owner, about.Created.Unix()), nil
}

// DescribeModel renders GET /v1/models/{model}.
func (ChatCodec) DescribeModel(id string, about protocol.ModelAbout) []byte {
	return EncodeModel(id, about.Owner, about.Created.Unix())
}

// ModelID is the name itself: OpenAI clients name models by their id.
func (ChatCodec) ModelID(name string) string { return name }

// EncodeModelList renders the GET /v1/models body: {"object":"list",
// "data":[{"id","object":"model","created","owned_by"}...]}, in the order of
// ids. An empty list still has "data": [], which clients index into.
func EncodeModelList(ids []string, owner string, created int64) []byte {
	buf := make([]byte, 0, 32+len(ids)*(64+len(owner)))
	buf = append(buf, `{"object":"list","data":[`...)
	for i, id := range ids {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = appendModel(buf, id, owner, created)
	}
	return append(buf, "]}"...)
}

// EncodeModel renders the GET /v1/models/{model} body for one model.
func EncodeModel(id, owner string, created int64) []byte {
	return appendModel(make([]byte, 0, 64+len(id)+len(owner)), id, owner, created)
}

func appendModel(buf []byte, id, owner string, created int64) []byte {
	buf = append(buf, `{"id":`...)
	buf = appendString(buf, id)
	buf = append(buf, `,"object":"model","created":`...)
	buf = strconv.AppendInt(buf, created, 10)
	buf = append(buf, `,"owned_by":`...)
	buf = appendString(buf, owner)
	return append(buf, '}')
}

// ModelNotFound is the 404 for GET /v1/models/{model} (and for a chat
// request naming a model the key may not use), with the model_not_found
// code clients check for.
func ModelNotFound(model string) *ir.Error { return protocol.ModelNotFound(model) }
