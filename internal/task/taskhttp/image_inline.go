package taskhttp

import (
	"context"
	"encoding/base64"

	"github.com/turnpike-gw/turnpike/internal/task"
)

// inlineImages adds b64_json to every item that has only a url, keeping the
// url. A failed download is logged and leaves that item as it was: the
// client still has the address.
func (h *Handlers) inlineImages(ctx context.Context, t *task.Task, items []map[string]any) {
	for i, it := range items {
		u, _ := it["url"].(string)
		if b, _ := it["b64_json"].(string); b != "" || u == "" {
			continue
		}
		data, err := h.core.FetchImage(ctx, u)
		if err != nil {
			h.log.Warn("downloading an image for b64_json failed; the url is kept", "task", t.PublicID, "item", i, "err", err)
			continue
		}
		it["b64_json"] = base64.StdEncoding.EncodeToString(data)
	}
}
