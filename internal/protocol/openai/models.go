package openai

import (
	"strconv"

	"github.com/turnpike-gw/turnpike/internal/ir"
)

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
func ModelNotFound(model string) *ir.Error {
	e := ir.Errorf(404, ir.KindNotFound, "model_not_found", "The model '%s' does not exist or you do not have access to it.", truncate(model, 200))
	e.Param = "model"
	return e
}
