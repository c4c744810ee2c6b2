// Package s3fake is an in-process S3 subset for tests: the usage archive's
// and content logging's objects against the real AWS SDK client
// (archive/s3bucket). It serves tests only.
package s3fake

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Fake is the S3 subset the archive speaks (PutObject and GetObject,
// path-style, one bucket), in process. It refuses a request not signed
// with SigV4 for its access key, so the test proves the SDK's credentials
// reach the store, and it can fail the next read of a key to prove that a
// day whose archive does not read back is never deleted. Writing one was
// less than adopting a fake library for two operations.
type Fake struct {
	// Bucket and Access are the one bucket it serves and the access key
	// requests must be signed with.
	Bucket, Access string
	mu             sync.Mutex
	objects        map[string][]byte
	puts           []string
	corrupt        map[string]bool // keys whose next read answers other bytes
}

// New starts a fake serving bucket "books" to access key "AKIDARCHIVE"
// and returns it with its address; it stops with the test.
func New(t testing.TB) (*Fake, string) {
	f := &Fake{Bucket: "books", Access: "AKIDARCHIVE", objects: map[string][]byte{}, corrupt: map[string]bool{}}
	srv := httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(srv.Close)
	return f, srv.URL
}

func (f *Fake) serve(w http.ResponseWriter, r *http.Request) {
	if auth := r.Header.Get("Authorization"); !strings.HasPrefix(auth, "AWS4-HMAC-SHA256 Credential="+f.Access+"/") {
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprint(w, `<Error><Code>AccessDenied</Code><Message>unsigned</Message></Error>`)
		return
	}
	key, ok := strings.CutPrefix(r.URL.Path, "/"+f.Bucket+"/")
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

// Keys lists the keys the bucket holds.
func (f *Fake) Keys() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]string, 0, len(f.objects))
	for k := range f.objects {
		out = append(out, k)
	}
	return out
}

// Get is the object at key (false: none).
func (f *Fake) Get(key string) ([]byte, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	b, ok := f.objects[key]
	return b, ok
}

// Corrupt makes the next read of key answer other bytes.
func (f *Fake) Corrupt(key string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.corrupt[key] = true
}
