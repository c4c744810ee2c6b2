package archive_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// fakeS3 is the S3 subset the archive speaks (PutObject and GetObject,
// path-style, one bucket), in process. It refuses a request not signed
// with SigV4 for its access key, so the test proves the SDK's credentials
// reach the store, and it can fail the next read of a key to prove that a
// day whose archive does not read back is never deleted. Writing one was
// less than adopting a fake library for two operations.
type fakeS3 struct {
	t       *testing.T
	bucket  string
	access  string
	mu      sync.Mutex
	objects map[string][]byte
	puts    []string
	corrupt map[string]bool // keys whose next read answers other bytes
}

func newFakeS3(t *testing.T) (*fakeS3, string) {
	f := &fakeS3{t: t, bucket: "books", access: "AKIDARCHIVE", objects: map[string][]byte{}, corrupt: map[string]bool{}}
	srv := httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(srv.Close)
	return f, srv.URL
}

func (f *fakeS3) serve(w http.ResponseWriter, r *http.Request) {
	if auth := r.Header.Get("Authorization"); !strings.HasPrefix(auth, "AWS4-HMAC-SHA256 Credential="+f.access+"/") {
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprint(w, `<Error><Code>AccessDenied</Code><Message>unsigned</Message></Error>`)
		return
	}
	key, ok := strings.CutPrefix(r.URL.Path, "/"+f.bucket+"/")
	if !ok {
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `<Error><Code>NoSuchBucket</Code></Error>`)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch r.Method {
	case http.MethodPut:
		body, err := io.ReadAll(r.Body)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		f.objects[key] = body
		f.puts = append(f.puts, key)
		w.Header().Set("ETag", `"e"`)
	case http.MethodGet:
		body, ok := f.objects[key]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `<Error><Code>NoSuchKey</Code><Message>missing</Message></Error>`)
			return
		}
		if f.corrupt[key] {
			delete(f.corrupt, key)
			body = []byte("not gzip")
		}
		w.Header().Set("Content-Length", fmt.Sprint(len(body)))
		_, _ = w.Write(body)
	default:
		w.WriteHeader(http.StatusMethodNotAllowed)
	}
}

func (f *fakeS3) keys() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]string, 0, len(f.objects))
	for k := range f.objects {
		out = append(out, k)
	}
	return out
}
