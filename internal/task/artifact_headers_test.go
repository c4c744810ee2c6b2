package task

import (
	"mime"
	"strings"
	"testing"
)

// Whatever a vendor sends as Content-Type, only a well-formed image, video
// or audio type without script-capable markup is ever shown inline.
func FuzzInlineMediaOnlyAdmitsPlainMedia(f *testing.F) {
	for _, s := range []string{"video/mp4", "image/svg+xml", "text/html", "image/png; a=b", "IMAGE/PNG", "image/", "audio/x;;"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, ct string) {
		if !inlineMedia(ct) {
			return
		}
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || strings.Contains(mt, "svg") || strings.Contains(mt, "xml") ||
			!(strings.HasPrefix(mt, "image/") || strings.HasPrefix(mt, "video/") || strings.HasPrefix(mt, "audio/")) {
			t.Fatalf("%q is shown inline", ct)
		}
	})
}
