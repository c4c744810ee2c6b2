package task

import (
	"mime"
	"net/http"
	"strings"
)

// inlineMediaTypes are shown in place; every other artifact is a download.
// SVG is an image type that can carry script, so it is not among them.
var inlineMediaTypes = []string{"image/", "video/", "audio/"}

// setArtifactSafety marks an artifact answer served from the gateway's own
// origin as inert: the browser must not sniff it into HTML, must run it in a
// sandbox (no script, no same-origin access to the console), and must save
// rather than render anything that is not a plain picture, video or sound.
func setArtifactSafety(h http.Header) {
	if h.Get("Content-Type") == "" {
		// Otherwise net/http would sniff the body and could call it HTML.
		h.Set("Content-Type", "application/octet-stream")
	}
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "sandbox")
	if !inlineMedia(h.Get("Content-Type")) {
		h.Set("Content-Disposition", "attachment")
	}
}

// inlineMedia reports whether an upstream Content-Type names an image,
// video or audio type that browsers render without running script.
func inlineMedia(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil || strings.Contains(mt, "svg") || strings.Contains(mt, "xml") {
		return false
	}
	for _, p := range inlineMediaTypes {
		if strings.HasPrefix(mt, p) && len(mt) > len(p) {
			return true
		}
	}
	return false
}
