package taskhttp

import (
	"context"
	"github.com/turnpike-gw/turnpike/internal/task"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const videoBytes = "0123456789-the-whole-video"

// artifactEnv is a finished filer task whose video lives on the vendor and
// whose poster address the vendor gave as posterURL.
type artifactEnv struct {
	e      *env
	v      *filerVendor
	task   *task.Task
	mu     sync.Mutex
	seen   []http.Header // what the vendor's content route received
	public []http.Header // what the public route received
}

func newArtifactEnv(t *testing.T, posterURL func(vendor string) string, mod func(*task.Options)) *artifactEnv {
	t.Helper()
	e, v := newFilerEnv(t, func(o *task.Options) {
		o.Secret, o.PublicAddress = "secret-one", "https://gw.example/"
		if mod != nil {
			mod(o)
		}
	})
	a := &artifactEnv{e: e, v: v}
	modTime := time.Unix(1700000000, 0)
	v.content = func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		a.seen = append(a.seen, r.Header.Clone())
		a.mu.Unlock()
		if r.URL.Path != "/content/job-1/video.mp4" {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		w.Header().Set("ETag", `"v1"`)
		w.Header().Set("Set-Cookie", "vendor=secret")
		w.Header().Set("Content-Type", "video/mp4")
		http.ServeContent(w, r, "", modTime, strings.NewReader(videoBytes))
	}
	v.public = func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		a.public = append(a.public, r.Header.Clone())
		a.mu.Unlock()
		if r.URL.Path == "/public/redirect" {
			http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
			return
		}
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write([]byte("POSTER"))
	}
	v.job = `{"status":"done","url":"https://cdn.filer.test/v.mp4","poster":"` + posterURL(v.srv.URL) + `"}`
	code, out := e.postJSON("/filer/v1/jobs", userKey, `{"model":"filer-v1","mode":"json","spec":{}}`)
	if code != 200 {
		t.Fatalf("submit: %d %v", code, out)
	}
	e.tick(2)
	a.task = e.task(out["id"].(string))
	if a.task.Status != task.StatusSuccess {
		t.Fatalf("task status %s", a.task.Status)
	}
	return a
}

// links lists the task's artifacts, with addresses rebased on the test
// server in place of the public address.
func (a *artifactEnv) links(t *testing.T) map[string]task.ArtifactLink {
	t.Helper()
	links, err := a.e.svc.ArtifactLinks(context.Background(), a.task)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]task.ArtifactLink{}
	for _, l := range links {
		if !strings.HasPrefix(l.URL, "https://gw.example/v1/tasks/"+a.task.PublicID+"/artifacts/") {
			t.Errorf("link %s is not on the public address", l.URL)
		}
		l.URL = a.e.srv.URL + strings.TrimPrefix(l.URL, "https://gw.example")
		out[l.Key] = l
	}
	return out
}

func fetch(t *testing.T, method, u string, header map[string]string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(method, u, nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func TestArtifactsAreListedWithSignedLinksAndServedWithRanges(t *testing.T) {
	a := newArtifactEnv(t, func(string) string { return "https://cdn.filer.test/p.png" }, nil)
	links := a.links(t)
	if len(links) != 2 || links["video.mp4"].Type != "video" || links["video.mp4"].MIMEType != "video/mp4" || links["poster"].Type != "image" {
		t.Fatalf("links = %+v", links)
	}
	video := links["video.mp4"].URL
	tests := []struct {
		name       string
		method     string
		header     map[string]string
		wantStatus int
		wantBody   string
		wantHeader map[string]string
	}{
		{"a whole GET", "GET", nil, 200, videoBytes, map[string]string{"Content-Type": "video/mp4", "ETag": `"v1"`, "Accept-Ranges": "bytes"}},
		{"a range", "GET", map[string]string{"Range": "bytes=2-5"}, 206, "2345", map[string]string{"Content-Range": "bytes 2-5/26", "Content-Length": "4"}},
		{"a conditional GET", "GET", map[string]string{"If-None-Match": `"v1"`}, 304, "", nil},
		{"a HEAD", "HEAD", nil, 200, "", map[string]string{"Content-Length": "26"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := map[string]string{"Cookie": "session=gateway", "Authorization": "Bearer " + userKey}
			for k, v := range tt.header {
				h[k] = v
			}
			resp, body := fetch(t, tt.method, video, h)
			if resp.StatusCode != tt.wantStatus || body != tt.wantBody {
				t.Errorf("got %d %q, want %d %q", resp.StatusCode, body, tt.wantStatus, tt.wantBody)
			}
			for k, v := range tt.wantHeader {
				if resp.Header.Get(k) != v {
					t.Errorf("%s = %q, want %q", k, resp.Header.Get(k), v)
				}
			}
			if resp.Header.Get("Set-Cookie") != "" {
				t.Errorf("an unsafe upstream header reached the client")
			}
			a.mu.Lock()
			got := a.seen[len(a.seen)-1]
			a.mu.Unlock()
			if got.Get("Cookie") != "" || got.Get("Authorization") != "Bearer "+vendorKey {
				t.Errorf("the vendor got Cookie %q and Authorization %q", got.Get("Cookie"), got.Get("Authorization"))
			}
		})
	}
}

func TestArtifactAddressesAreRefusedWhenTamperedExpiredOrRotated(t *testing.T) {
	a := newArtifactEnv(t, func(string) string { return "https://cdn.filer.test/p.png" }, nil)
	good := a.links(t)["video.mp4"].URL
	u, _ := url.Parse(good)
	q := u.Query()
	expired := a.e.svc.ArtifactURL(a.task.PublicID, "video.mp4", time.Now().Add(-time.Minute))
	tamper := func(key, value string) string {
		q2 := url.Values{}
		for k, v := range q {
			q2[k] = v
		}
		q2.Set(key, value)
		return a.e.srv.URL + u.Path + "?" + q2.Encode()
	}
	tests := []struct {
		name, url string
		want      int
	}{
		{"the signed address", good, 200},
		{"a changed expiry", tamper("exp", "99999999999"), 403},
		{"a changed signature", tamper("sig", strings.Repeat("A", 43)), 403},
		{"another artifact's key", strings.Replace(good, "/video.mp4?", "/poster?", 1), 403},
		{"an expired address", a.e.srv.URL + strings.TrimPrefix(expired, "https://gw.example"), 403},
		{"no signature", a.e.srv.URL + u.Path, 403},
	}
	for _, tt := range tests {
		resp, body := fetch(t, "GET", tt.url, nil)
		if resp.StatusCode != tt.want {
			t.Errorf("%s: got %d %s, want %d", tt.name, resp.StatusCode, body, tt.want)
		}
	}
	// Another node with the same secret honours the address; rotating the
	// secret ends it.
	a.e.restart()
	if resp, body := fetch(t, "GET", strings.Replace(good, u.Host, a.e.srv.Listener.Addr().String(), 1), nil); resp.StatusCode != 200 {
		t.Errorf("same secret on a new node: %d %s", resp.StatusCode, body)
	}
	a.e.close()
	a.e.opts.Secret = "secret-two"
	a.e.open()
	if resp, _ := fetch(t, "GET", strings.Replace(good, u.Host, a.e.srv.Listener.Addr().String(), 1), nil); resp.StatusCode != 403 {
		t.Errorf("after rotation: %d, want 403", resp.StatusCode)
	}
}

func TestUnknownArtifactsAndUnfinishedTasksAre404(t *testing.T) {
	a := newArtifactEnv(t, func(string) string { return "https://cdn.filer.test/p.png" }, nil)
	exp := time.Now().Add(time.Hour)
	unknown := a.e.srv.URL + strings.TrimPrefix(a.e.svc.ArtifactURL(a.task.PublicID, "nope", exp), "https://gw.example")
	if resp, body := fetch(t, "GET", unknown, nil); resp.StatusCode != 404 {
		t.Errorf("unknown key: %d %s", resp.StatusCode, body)
	}
	missing := a.e.srv.URL + strings.TrimPrefix(a.e.svc.ArtifactURL("task_missing", "video.mp4", exp), "https://gw.example")
	if resp, body := fetch(t, "GET", missing, nil); resp.StatusCode != 404 {
		t.Errorf("unknown task: %d %s", resp.StatusCode, body)
	}
}

func TestCredentiallessContentStaysOffPrivateAddresses(t *testing.T) {
	cdn := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			t.Errorf("a credentialless request carried Authorization")
		}
		_, _ = w.Write([]byte("CDN-POSTER"))
	}))
	t.Cleanup(cdn.Close)
	tests := []struct {
		name         string
		poster       func(vendor string) string
		allowPrivate bool
		wantStatus   int
		wantBody     string
	}{
		{"the channel's own private host", func(v string) string { return v + "/public/p.png" }, false, 200, "POSTER"},
		{"another private host", func(string) string { return cdn.URL + "/p.png" }, false, 502, "private address"},
		{"another private host when allowed", func(string) string { return cdn.URL + "/p.png" }, true, 200, "CDN-POSTER"},
		{"a redirect to the metadata address", func(v string) string {
			return v + "/public/redirect?to=" + url.QueryEscape("http://169.254.169.254/latest/meta-data")
		}, false, 502, "169.254.169.254:80"},
		{"a redirect to another private host", func(v string) string {
			return v + "/public/redirect?to=" + url.QueryEscape(cdn.URL+"/p.png")
		}, false, 502, "private address"},
		{"a redirect to another private host when allowed", func(v string) string {
			return v + "/public/redirect?to=" + url.QueryEscape(cdn.URL+"/p.png")
		}, true, 200, "CDN-POSTER"},
		{"a non-http address", func(string) string { return "file:///etc/passwd" }, false, 502, "http"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newArtifactEnv(t, tt.poster, func(o *task.Options) { o.AllowPrivateContent = tt.allowPrivate })
			resp, body := fetch(t, "GET", a.links(t)["poster"].URL, nil)
			if resp.StatusCode != tt.wantStatus || !strings.Contains(body, tt.wantBody) {
				t.Errorf("got %d %s, want %d containing %q", resp.StatusCode, body, tt.wantStatus, tt.wantBody)
			}
		})
	}
}

// A guarded fetch must connect to its target itself: through HTTP(S)_PROXY
// the dial-time check would judge the proxy's address instead.
func TestGuardedContentIgnoresTheEnvironmentProxy(t *testing.T) {
	var proxyHits atomic.Int32
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proxyHits.Add(1)
		w.WriteHeader(http.StatusBadGateway)
	}))
	t.Cleanup(proxy.Close)
	a := newArtifactEnv(t, func(v string) string { return v + "/public/p.png" }, nil)
	proxyURL, _ := url.Parse(proxy.URL)
	a.e.client.Transport = &http.Transport{Proxy: http.ProxyURL(proxyURL)}
	a.e.restart()
	resp, body := fetch(t, "GET", a.links(t)["poster"].URL, nil)
	if resp.StatusCode != 200 || body != "POSTER" || proxyHits.Load() != 0 {
		t.Fatalf("got %d %q with %d proxied requests, want the poster fetched directly", resp.StatusCode, body, proxyHits.Load())
	}
}
