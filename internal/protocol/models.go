package protocol

import (
	"net/http"
	"net/url"
	"time"
	"unicode/utf8"

	"github.com/turnpike-gw/turnpike/internal/ir"
)

// ModelAbout is what the gateway says of every model it lists: it does not
// know when a provider released one, so all share one creation time.
type ModelAbout struct {
	// Owner is reported where the format names one (OpenAI's owned_by).
	Owner   string
	Created time.Time
}

// ModelCatalog renders the gateway's models in one client format's shapes,
// for that format's GET …/models calls.
type ModelCatalog interface {
	// ListModels answers a model-list call over ids, every model the caller
	// may use, in order. query and header are the call's: a format that
	// pages reads its page from the query (a bad page parameter is an
	// *ir.Error 400) and may shape the last page for the client that asks.
	ListModels(ids []string, about ModelAbout, query url.Values, header http.Header) ([]byte, error)
	// DescribeModel renders one model, for GET …/models/{model}.
	DescribeModel(id string, about ModelAbout) []byte
	// ModelID is the model a client of this format names: the name
	// without the format's own decoration ("models/x" is x where models are
	// named as resources).
	ModelID(name string) string
}

// ModelNotFound is the 404 for a model the caller cannot see, with the
// model_not_found code clients check for; each codec renders it in its
// dialect.
func ModelNotFound(model string) *ir.Error {
	e := ir.Errorf(404, ir.KindNotFound, "model_not_found", "The model '%s' does not exist or you do not have access to it.", truncate(model, 200))
	e.Param = "model"
	return e
}

// truncate shortens s to at most n bytes on a rune boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
