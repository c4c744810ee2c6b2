package app

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestBodyReadTimeoutLeavesRoomForTheLargestBodyAtTheSlowestRate(t *testing.T) {
	cases := []struct {
		name  string
		limit int64
		want  time.Duration
	}{
		{"no body allowed", 0, 2 * time.Minute},
		{"the default 32 MiB", 32 << 20, 2*time.Minute + 512*time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := bodyReadTimeout(tc.limit); got != tc.want {
				t.Fatalf("bodyReadTimeout(%d) = %s, want %s", tc.limit, got, tc.want)
			}
		})
	}
}

// deadlineServer reads the whole body, then streams ticks for stream long,
// reporting whether the request context survived, behind the gateway's server
// settings with a read timeout of d.
func deadlineServer(t *testing.T, d, stream time.Duration) *httptest.Server {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			http.Error(w, "body: "+err.Error(), http.StatusRequestTimeout)
			return
		}
		w.WriteHeader(200)
		end := time.Now().Add(stream)
		for time.Now().Before(end) {
			if r.Context().Err() != nil {
				fmt.Fprint(w, "cancelled")
				return
			}
			fmt.Fprint(w, ".")
			http.NewResponseController(w).Flush()
			time.Sleep(20 * time.Millisecond)
		}
		fmt.Fprint(w, "done")
	})
	srv := httptest.NewUnstartedServer(h)
	srv.Config = newServer(h, d, slog.New(slog.DiscardHandler))
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

func TestABodyThatStallsPastItsDeadlineIsCutOff(t *testing.T) {
	srv := deadlineServer(t, 200*time.Millisecond, 0)
	pr, pw := io.Pipe()
	go func() {
		_, _ = pw.Write([]byte(`{"start":`))
		time.Sleep(2 * time.Second)
		pw.Close()
	}()
	start := time.Now()
	resp, err := http.Post(srv.URL, "application/json", pr)
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestTimeout {
			t.Fatalf("status %d, want 408 from a timed-out body read", resp.StatusCode)
		}
	}
	if took := time.Since(start); took > 1500*time.Millisecond {
		t.Fatalf("the stalled body held the request for %s", took)
	}
}

func TestAStreamedAnswerOutlivesTheBodyDeadline(t *testing.T) {
	srv := deadlineServer(t, 150*time.Millisecond, 600*time.Millisecond)
	resp, err := http.Post(srv.URL, "application/json", bytes.NewReader([]byte(`{"stream":true}`)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if !strings.HasSuffix(string(out), "done") {
		t.Fatalf("the stream ended early: %q", out)
	}
}
