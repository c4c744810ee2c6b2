package taskhttp

import (
	"net/http"
	"strings"
	"testing"
)

// Artifacts are served from the gateway's own origin, so whatever the
// vendor labels them, none may run script as the console.
func TestArtifactsAreServedInertWhateverTheirType(t *testing.T) {
	a := newArtifactEnv(t, func(string) string { return "https://cdn.filer.test/p.png" }, nil)
	var contentType string
	a.v.content = func(w http.ResponseWriter, r *http.Request) {
		if contentType != "" {
			w.Header().Set("Content-Type", contentType)
		}
		_, _ = w.Write([]byte("<html><script>alert(document.cookie)</script></html>"))
	}
	video := a.links(t)["video.mp4"].URL
	tests := []struct {
		name           string
		contentType    string
		wantAttachment bool
	}{
		{"a video plays inline", "video/mp4", false},
		{"an image shows inline", "image/png; charset=binary", false},
		{"audio plays inline", "audio/mpeg", false},
		{"HTML is a download", "text/html; charset=utf-8", true},
		{"SVG is a download", "image/svg+xml", true},
		{"XHTML is a download", "application/xhtml+xml", true},
		{"JSON is a download", "application/json", true},
		{"no type is a download", "", true},
		{"a malformed type is a download", "video/", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			contentType = tt.contentType
			resp, _ := fetch(t, "GET", video, nil)
			if resp.StatusCode != 200 {
				t.Fatalf("status %d", resp.StatusCode)
			}
			if got := resp.Header.Get("X-Content-Type-Options"); got != "nosniff" {
				t.Errorf("X-Content-Type-Options = %q", got)
			}
			if got := resp.Header.Get("Content-Security-Policy"); got != "sandbox" {
				t.Errorf("Content-Security-Policy = %q", got)
			}
			if got := strings.HasPrefix(resp.Header.Get("Content-Disposition"), "attachment"); got != tt.wantAttachment {
				t.Errorf("Content-Disposition = %q, want attachment %v", resp.Header.Get("Content-Disposition"), tt.wantAttachment)
			}
		})
	}
}
