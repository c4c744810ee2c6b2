package sse

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

type got struct{ name, id, data string }

func readAll(t *testing.T, r io.Reader, max int) ([]got, error) {
	t.Helper()
	rd := NewReader(r, max)
	var out []got
	for {
		ev, err := rd.Next()
		if err != nil {
			if err == io.EOF {
				return out, nil
			}
			return out, err
		}
		out = append(out, got{string(ev.Name), string(ev.ID), string(ev.Data)})
	}
}

func TestReaderFramesEventsLikeTheStandard(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want []got
	}{
		{"single data line", "data: hello\n\n", []got{{"", "", "hello"}}},
		{"crlf line ends", "event: a\r\ndata: x\r\n\r\n", []got{{"a", "", "x"}}},
		{"lone cr line ends", "data: x\rdata: y\r\r", []got{{"", "", "x\ny"}}},
		{"multi-line data joined by newline", "data: a\ndata: b\n\n", []got{{"", "", "a\nb"}}},
		{"comment ignored", ": ping\n\ndata: z\n\n", []got{{"", "", "z"}}},
		{"no space after colon", "data:raw\n\n", []got{{"", "", "raw"}}},
		{"only one leading space stripped", "data:  two\n\n", []got{{"", "", " two"}}},
		{"id persists across events", "id: 7\ndata: a\n\ndata: b\n\n", []got{{"", "7", "a"}, {"", "7", "b"}}},
		{"event without data is not dispatched", "event: x\n\ndata: y\n\n", []got{{"", "", "y"}}},
		{"unterminated last event dropped", "data: a\n\ndata: b", []got{{"", "", "a"}}},
		{"field without colon", "data\n\n", []got{{"", "", ""}}},
		{"unknown field ignored", "foo: bar\ndata: q\n\n", []got{{"", "", "q"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, err := readAll(t, strings.NewReader(tc.in), 0)
			if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("unexpected error %v", err)
			}
			if len(out) != len(tc.want) {
				t.Fatalf("got %d events %+v, want %+v", len(out), out, tc.want)
			}
			for i := range out {
				if out[i] != tc.want[i] {
					t.Errorf("event %d = %+v, want %+v", i, out[i], tc.want[i])
				}
			}
		})
	}
}

func TestReaderHandlesCRLFSplitAcrossReads(t *testing.T) {
	in := "data: a\r\n\r\ndata: b\r\n\r\n"
	out, err := readAll(t, iotest.OneByteReader(strings.NewReader(in)), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 2 || out[0].data != "a" || out[1].data != "b" {
		t.Fatalf("got %+v", out)
	}
}

func TestReaderRejectsOversizedEvent(t *testing.T) {
	in := "data: " + strings.Repeat("x", 100) + "\n\n"
	_, err := readAll(t, strings.NewReader(in), 50)
	if !errors.Is(err, ErrEventTooLarge) {
		t.Fatalf("err = %v, want ErrEventTooLarge", err)
	}
	in = strings.Repeat("data: xxxxxxxxxx\n", 10) + "\n"
	_, err = readAll(t, strings.NewReader(in), 50)
	if !errors.Is(err, ErrEventTooLarge) {
		t.Fatalf("many lines: err = %v, want ErrEventTooLarge", err)
	}
}

func TestWriteEventRoundTripsThroughReader(t *testing.T) {
	var out, buf bytes.Buffer
	if err := WriteEvent(&out, &buf, "delta", []byte("line1\nline2")); err != nil {
		t.Fatal(err)
	}
	if err := WriteEvent(&out, &buf, "", []byte(`{"a":1}`)); err != nil {
		t.Fatal(err)
	}
	evs, err := readAll(t, &out, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []got{{"delta", "", "line1\nline2"}, {"", "", `{"a":1}`}}
	if len(evs) != 2 || evs[0] != want[0] || evs[1] != want[1] {
		t.Fatalf("got %+v", evs)
	}
}

// FuzzReader checks that no input panics or grows an event past the limit,
// and that framing does not depend on how the bytes arrive: the same input
// read whole and one byte at a time yields the same events.
func FuzzReader(f *testing.F) {
	f.Add([]byte("data: a\r\n\r\nevent: e\nid: 1\nretry: 10\ndata: b\n\n"))
	f.Add([]byte(":c\rdata\r\r"))
	f.Add([]byte("data: x\r\r\ndata: y\n\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		whole := collect(NewReader(bytes.NewReader(in), 256))
		split := collect(NewReader(iotest.OneByteReader(bytes.NewReader(in)), 256))
		if len(whole) != len(split) {
			t.Fatalf("whole read gave %d events, byte-wise %d", len(whole), len(split))
		}
		for i := range whole {
			if whole[i] != split[i] {
				t.Fatalf("event %d: whole %+v, byte-wise %+v", i, whole[i], split[i])
			}
			if len(whole[i].data) > 256 {
				t.Fatalf("event larger than the limit")
			}
		}
	})
}

func collect(rd *Reader) []got {
	var out []got
	for {
		ev, err := rd.Next()
		if err != nil {
			return out
		}
		out = append(out, got{string(ev.Name), string(ev.ID), string(ev.Data)})
	}
}

func BenchmarkReaderNext(b *testing.B) {
	chunk := []byte(`data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"hello"}}]}` + "\n\n")
	stream := bytes.Repeat(chunk, 1000)
	b.ReportAllocs()
	b.SetBytes(int64(len(stream)))
	for i := 0; i < b.N; i++ {
		rd := NewReader(bytes.NewReader(stream), 0)
		for {
			if _, err := rd.Next(); err != nil {
				break
			}
		}
	}
}

func TestReaderReadsLinesLongerThanItsBufferWhole(t *testing.T) {
	long := strings.Repeat("0123456789abcdef", 5*readBufferSize/16+3)
	in := "event: big\ndata: " + long + "\ndata: tail\n\n" + "data: " + long[:readBufferSize-7] + "\r\n\r\ndata: next\n\n"
	for name, r := range map[string]io.Reader{
		"whole":       strings.NewReader(in),
		"byte a read": iotest.OneByteReader(strings.NewReader(in)),
		"half reads":  iotest.HalfReader(strings.NewReader(in)),
	} {
		t.Run(name, func(t *testing.T) {
			out, err := readAll(t, r, 0)
			if err != nil {
				t.Fatal(err)
			}
			want := []got{{"big", "", long + "\ntail"}, {"", "", long[:readBufferSize-7]}, {"", "", "next"}}
			if len(out) != len(want) {
				t.Fatalf("got %d events, want %d", len(out), len(want))
			}
			for i := range want {
				if out[i] != want[i] {
					t.Errorf("event %d: name %q, %d data bytes; want name %q, %d data bytes", i, out[i].name, len(out[i].data), want[i].name, len(want[i].data))
				}
			}
		})
	}
}
