package s3blobs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/turnpike-gw/turnpike/internal/batch"
)

// fakeS3 is an S3-compatible server for one bucket that refuses any
// request whose SigV4 signature it cannot recompute with its own secret,
// and whose payload does not match the signed hash.
type fakeS3 struct {
	t       *testing.T
	access  string
	secret  string
	bucket  string
	mu      sync.Mutex
	objects map[string][]byte
	uploads map[string]map[int][]byte
	refused []string
	methods []string
}

func newFakeS3(t *testing.T) (*fakeS3, *httptest.Server) {
	f := &fakeS3{t: t, access: "AKIDTURNPIKE", secret: "s3-secret-value", bucket: "files",
		objects: map[string][]byte{}, uploads: map[string]map[int][]byte{}}
	srv := httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(srv.Close)
	return f, srv
}

func (f *fakeS3) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if why := f.verify(r, body); why != "" {
		f.mu.Lock()
		f.refused = append(f.refused, why)
		f.mu.Unlock()
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprintf(w, `<Error><Code>SignatureDoesNotMatch</Code><Message>%s</Message></Error>`, why)
		return
	}
	key, ok := strings.CutPrefix(r.URL.Path, "/"+f.bucket+"/")
	if !ok {
		http.Error(w, "<Error><Code>NoSuchBucket</Code></Error>", 404)
		return
	}
	q := r.URL.Query()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.methods = append(f.methods, r.Method+" "+strings.Join(sortedKeys(q), ","))
	switch {
	case r.Method == "POST" && q.Has("uploads"):
		id := fmt.Sprintf("up-%d", len(f.uploads)+1)
		f.uploads[id] = map[int][]byte{}
		fmt.Fprintf(w, `<InitiateMultipartUploadResult><Bucket>%s</Bucket><Key>%s</Key><UploadId>%s</UploadId></InitiateMultipartUploadResult>`, f.bucket, key, id)
	case r.Method == "PUT" && q.Has("uploadId"):
		var n int
		fmt.Sscan(q.Get("partNumber"), &n)
		f.uploads[q.Get("uploadId")][n] = body
		w.Header().Set("ETag", fmt.Sprintf(`"etag-%d"`, n))
	case r.Method == "POST" && q.Has("uploadId"):
		parts := f.uploads[q.Get("uploadId")]
		var all []byte
		for i := 1; i <= len(parts); i++ {
			all = append(all, parts[i]...)
		}
		f.objects[key] = all
		delete(f.uploads, q.Get("uploadId"))
		fmt.Fprintf(w, `<CompleteMultipartUploadResult><Bucket>%s</Bucket><Key>%s</Key><ETag>"x"</ETag></CompleteMultipartUploadResult>`, f.bucket, key)
	case r.Method == "DELETE" && q.Has("uploadId"):
		delete(f.uploads, q.Get("uploadId"))
		w.WriteHeader(http.StatusNoContent)
	case r.Method == "PUT":
		f.objects[key] = body
		w.Header().Set("ETag", `"x"`)
	case r.Method == "GET":
		b, ok := f.objects[key]
		if !ok {
			w.WriteHeader(404)
			fmt.Fprint(w, `<Error><Code>NoSuchKey</Code></Error>`)
			return
		}
		_, _ = w.Write(b)
	case r.Method == "DELETE":
		delete(f.objects, key)
		w.WriteHeader(http.StatusNoContent)
	default:
		http.Error(w, "unexpected", 400)
	}
}

func sortedKeys(q map[string][]string) []string {
	var out []string
	for k := range q {
		if k != "x-id" { // the SDK names its operation; S3 ignores it
			out = append(out, k)
		}
	}
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// verify recomputes the request's SigV4 signature from the headers it
// signed and compares it; it also checks the payload against its hash.
func (f *fakeS3) verify(r *http.Request, body []byte) string {
	auth := r.Header.Get("Authorization")
	rest, ok := strings.CutPrefix(auth, "AWS4-HMAC-SHA256 ")
	if !ok {
		return "not signed with SigV4"
	}
	fields := map[string]string{}
	for _, p := range strings.Split(rest, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
		fields[k] = v
	}
	cred := strings.Split(fields["Credential"], "/")
	if len(cred) != 5 || cred[0] != f.access || cred[3] != "s3" {
		return "credential scope " + fields["Credential"]
	}
	hash := r.Header.Get("X-Amz-Content-Sha256")
	if hash != "UNSIGNED-PAYLOAD" {
		sum := sha256.Sum256(body)
		if hash != hex.EncodeToString(sum[:]) {
			return "payload does not match its signed hash"
		}
	}
	at, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if err != nil {
		return "no X-Amz-Date"
	}
	clone, _ := http.NewRequest(r.Method, "http://"+r.Host+r.URL.RequestURI(), nil)
	for _, h := range strings.Split(fields["SignedHeaders"], ";") {
		switch h {
		case "host":
		case "content-length":
			clone.ContentLength = r.ContentLength
		default:
			clone.Header[http.CanonicalHeaderKey(h)] = r.Header.Values(h)
		}
	}
	creds := aws.Credentials{AccessKeyID: f.access, SecretAccessKey: f.secret}
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, clone, hash, "s3", cred[2], at); err != nil {
		return err.Error()
	}
	if !strings.HasSuffix(clone.Header.Get("Authorization"), "Signature="+fields["Signature"]) {
		return "signature does not match"
	}
	return ""
}

func TestStoreKeepFilesInTheBucketWithSignedRequests(t *testing.T) {
	f, srv := newFakeS3(t)
	b := New(Options{Endpoint: srv.URL, Bucket: "files", AccessKey: f.access, SecretKey: f.secret, Region: "eu-west-1"})
	ctx := context.Background()
	tests := []struct {
		name string
		size int
		want []string // the S3 calls made, in order
	}{
		{"a small file is one PutObject", 1000, []string{"PUT "}},
		{"a file past one part is a multipart upload", 2*s3PartSize + 12345,
			[]string{"POST uploads", "PUT partNumber,uploadId", "PUT partNumber,uploadId", "PUT partNumber,uploadId", "POST uploadId"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f.mu.Lock()
			f.methods = nil
			f.mu.Unlock()
			data := bytes.Repeat([]byte("0123456789abcdef"), tc.size/16+1)[:tc.size]
			n, err := b.Put(ctx, "file-x", bytes.NewReader(data), 1<<30)
			if err != nil || n != int64(tc.size) {
				t.Fatalf("Put = %d, %v (refused: %v)", n, err, f.refused)
			}
			f.mu.Lock()
			calls := fmt.Sprint(f.methods)
			f.mu.Unlock()
			if calls != fmt.Sprint(tc.want) {
				t.Errorf("S3 calls %s, want %v", calls, tc.want)
			}
			rc, err := b.Open(ctx, "file-x")
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(rc)
			rc.Close()
			if !bytes.Equal(got, data) {
				t.Fatalf("read back %d bytes of %d", len(got), len(data))
			}
		})
	}
	if err := b.Delete(ctx, "file-x"); err != nil {
		t.Fatal(err)
	}
	if _, ok := f.objects["file-x"]; ok {
		t.Error("the object is still in the bucket")
	}
	if len(f.refused) != 0 {
		t.Errorf("the fake refused %v", f.refused)
	}
}

func TestStoreStopAnUploadPastTheLimitAndLeaveNothing(t *testing.T) {
	f, srv := newFakeS3(t)
	b := New(Options{Endpoint: srv.URL, Bucket: "files", AccessKey: f.access, SecretKey: f.secret})
	_, err := b.Put(context.Background(), "big", bytes.NewReader(make([]byte, s3PartSize+10)), s3PartSize)
	if !errors.Is(err, batch.ErrTooLarge) {
		t.Fatalf("err = %v, want batch.ErrTooLarge", err)
	}
	if len(f.objects) != 0 || len(f.uploads) != 0 {
		t.Errorf("left %d objects and %d open uploads", len(f.objects), len(f.uploads))
	}
}

func TestStoreWithAWrongSecretAreRefused(t *testing.T) {
	f, srv := newFakeS3(t)
	b := New(Options{Endpoint: srv.URL, Bucket: "files", AccessKey: f.access, SecretKey: "not-the-secret"})
	if _, err := b.Put(context.Background(), "x", strings.NewReader("data"), 100); err == nil {
		t.Fatal("a request signed with the wrong secret was accepted")
	}
	if len(f.refused) == 0 || !strings.Contains(f.refused[0], "signature does not match") {
		t.Errorf("refused = %v", f.refused)
	}
}
