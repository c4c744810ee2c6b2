package sse

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// TestReaderDispatchesEachEventWithoutWaitingForTheNext is the property a
// relay needs to stream: an event is returned as soon as its blank line has
// arrived, and Buffered then says nothing else is waiting, so the relay
// flushes it instead of holding it until the upstream's next event.
func TestReaderDispatchesEachEventWithoutWaitingForTheNext(t *testing.T) {
	framings := []struct{ name, eol string }{{"LF", "\n"}, {"CRLF", "\r\n"}, {"CR", "\r"}}
	for _, f := range framings {
		t.Run(f.name, func(t *testing.T) {
			pr, pw := io.Pipe()
			defer pr.Close()
			rd := NewReader(pr, 0)
			for _, data := range []string{"one", "two", "three"} {
				ev := "event: e" + f.eol + "data: " + data + f.eol + f.eol
				go func() { _, _ = pw.Write([]byte(ev)) }()
				got, err := rd.Next()
				if err != nil {
					t.Fatalf("Next: %v", err)
				}
				if string(got.Data) != data || string(got.Name) != "e" {
					t.Fatalf("got %q/%q, want e/%q", got.Name, got.Data, data)
				}
				if n := rd.Buffered(); n != 0 {
					t.Fatalf("Buffered() = %d after %q, want 0: the relay would hold the event back", n, data)
				}
			}
			pw.Close()
			if _, err := rd.Next(); !errors.Is(err, io.EOF) {
				t.Fatalf("end: err = %v, want EOF", err)
			}
		})
	}
}

func TestReaderBufferedCountsOnlyBytesAfterTheEvent(t *testing.T) {
	cases := []struct {
		name, in string
		want     int
	}{
		{"LF then next event", "data: a\n\ndata: b\n\n", len("data: b\n\n")},
		{"CRLF then next event", "data: a\r\n\r\ndata: b\r\n\r\n", len("data: b\r\n\r\n")},
		{"CRLF alone", "data: a\r\n\r\n", 0},
		{"CR alone", "data: a\r\r", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rd := NewReader(&stallReader{data: []byte(tc.in)}, 0)
			if _, err := rd.Next(); err != nil {
				t.Fatal(err)
			}
			if n := rd.Buffered(); n != tc.want {
				t.Fatalf("Buffered() = %d, want %d", n, tc.want)
			}
		})
	}
}

// errStalled stands for an upstream that has sent everything so far and is
// still open: a reader that needed more input would see it.
var errStalled = errors.New("stalled")

// stallReader hands out its data once, then reports errStalled.
type stallReader struct{ data []byte }

func (s *stallReader) Read(p []byte) (int, error) {
	if len(s.data) == 0 {
		return 0, errStalled
	}
	n := copy(p, s.data)
	s.data = s.data[n:]
	return n, nil
}

// FuzzReaderNeedsNoLookahead checks that every event a closed stream yields
// is also yielded by a stream that stays open after the same bytes: no
// complete event waits for input that has not arrived.
func FuzzReaderNeedsNoLookahead(f *testing.F) {
	f.Add([]byte("data: a\r\n\r\n"))
	f.Add([]byte("data: a\r\rdata: b\n\n"))
	f.Add([]byte("event: x\r\ndata: {\"a\":1}\r\n\r\n: ping\r\n\r\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		closed := collect(NewReader(bytes.NewReader(in), 256))
		open := collect(NewReader(&stallReader{data: in}, 256))
		if len(open) != len(closed) {
			t.Fatalf("open stream gave %d events, closed %d", len(open), len(closed))
		}
		for i := range open {
			if open[i] != closed[i] {
				t.Fatalf("event %d: open %+v, closed %+v", i, open[i], closed[i])
			}
		}
	})
}
