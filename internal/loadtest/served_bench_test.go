package loadtest

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// The served benchmarks put the handler behind a real loopback HTTP server
// and call it with a keep-alive client, so the server's response writing
// (its buffers, chunked framing and write system calls) is measured too,
// which the recorder of the other relay benchmarks skips. ns/op and
// cpu-ns/op cover the client, the server and the upstream of the same
// process: compare a gateway with the baseline, or two builds.

func BenchmarkServedChatRegular(b *testing.B) {
	benchServed(b, gatewayHandler(b), Regular)
}

func BenchmarkServedChatStream(b *testing.B) {
	benchServed(b, gatewayHandler(b), Stream)
}

func BenchmarkServedBaselineChatRegular(b *testing.B) {
	benchServed(b, baselineHandler(b), Regular)
}

func BenchmarkServedBaselineChatStream(b *testing.B) {
	benchServed(b, baselineHandler(b), Stream)
}

func benchServed(b *testing.B, h http.Handler, mode Mode) {
	srv := httptest.NewServer(h)
	b.Cleanup(srv.Close)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1, DisableCompression: true}}
	b.Cleanup(client.CloseIdleConnections)
	body := (&phase{mode: mode}).body()
	var answer bytes.Buffer
	call := func() {
		req, err := http.NewRequest(http.MethodPost, srv.URL+"/v1/chat/completions", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+BenchKey)
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		answer.Reset()
		_, err = io.Copy(&answer, resp.Body)
		_ = resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK || !bytes.Contains(answer.Bytes(), []byte("choices")) {
			b.Fatalf("status %d, %v: %s", resp.StatusCode, err, answer.String())
		}
	}
	// One checked call first: a benchmark of error answers would be fast
	// and meaningless.
	call()
	b.ReportAllocs()
	before := processCPU(b)
	for b.Loop() {
		call()
	}
	b.ReportMetric(float64(processCPU(b)-before)/float64(b.N), "cpu-ns/op")
}
