package relay

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
)

// BenchmarkReadLimited reads a request body as every call does first, for
// a short chat request and for prompts of 32 KB and 512 KB.
func BenchmarkReadLimited(b *testing.B) {
	for _, size := range []int{300, 32 << 10, 512 << 10} {
		body := bytes.Repeat([]byte("x"), size)
		b.Run(strconv.Itoa(size), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(size))
			for b.Loop() {
				r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", bytes.NewReader(body))
				raw, err := readLimited(httptest.NewRecorder(), r, 32<<20)
				if err != nil || len(raw) != size {
					b.Fatalf("read %d bytes, err %v", len(raw), err)
				}
			}
		})
	}
}
