package e2e

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"regexp"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/web"
)

// TestPlaygroundStreamReaderInChromium runs the console's own SSE parser in
// the browser against streams cut at awkward places, because the network
// may split an event, a line or a CRLF pair anywhere.
func TestPlaygroundStreamReaderInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("browser tests skipped in -short mode")
	}
	bin := requireChromium(t)
	srv := httptest.NewServer(web.Handler())
	t.Cleanup(srv.Close)
	p := launchBrowser(t, bin).newPage(t)
	p.navigate(srv.URL + "/")
	var html string
	if err := p.eval(`document.documentElement.outerHTML`, &html); err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`/assets/[0-9a-f]+/`).FindString(html)
	if m == "" {
		t.Fatal("the index names no hashed asset base")
	}
	tests := []struct {
		name   string
		chunks []string
		want   []string
	}{
		{"one event per chunk", []string{"data: a\n\n", "data: b\n\n"}, []string{"a", "b"}},
		{"an event split inside its line", []string{"da", "ta: he", "llo\n", "\n"}, []string{"hello"}},
		{"CRLF split between chunks", []string{"data: x\r", "\n\r\n"}, []string{"x"}},
		{"bare CR line ends", []string{"data: y\r\r"}, []string{"y"}},
		{"comments and unknown fields are ignored", []string{": keep-alive\n\nid: 7\ndata: z\n\n"}, []string{"z"}},
		{"multi-line data joins with newlines", []string{"data: 1\ndata: 2\n\n"}, []string{"1\n2"}},
		{"a last event without a blank line is flushed", []string{"data: tail"}, []string{"tail"}},
		{"no space after the colon", []string{"data:tight\n\n"}, []string{"tight"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			chunks, _ := json.Marshal(tt.chunks)
			js := fmt.Sprintf(`import(%q).then(({SSEParser}) => { const got = [];
				const ps = new SSEParser(e => got.push(e.data)); for (const c of %s) ps.push(c); ps.end(); return got; })`,
				m+"js/sse.js", chunks)
			var got []string
			if err := p.eval(js, &got); err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) || len(got) != len(tt.want) {
				t.Errorf("events = %q, want %q", got, tt.want)
			}
		})
	}
}
