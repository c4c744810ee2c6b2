package sse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"
)

// chunked hands out its bytes in the given sizes, cycling, as a network
// read would.
type chunked struct {
	b     []byte
	sizes []int
	i     int
}

func (c *chunked) Read(p []byte) (int, error) {
	if len(c.b) == 0 {
		return 0, io.EOF
	}
	n := c.sizes[c.i%len(c.sizes)]
	c.i++
	n = max(1, min(n, len(p), len(c.b)))
	copy(p, c.b[:n])
	c.b = c.b[n:]
	return n, nil
}

// readerEvents is every event Reader finds in b and how the stream ended.
func readerEvents(b []byte, max int) ([]string, error) {
	r := NewReader(bytes.NewReader(b), max)
	defer r.Release()
	var out []string
	for {
		name, data, err := r.NextEvent()
		if err != nil {
			return out, err
		}
		out = append(out, fmt.Sprintf("%q:%q", name, data))
	}
}

// decoderEvents is the same through a Decoder fed in reads of the given sizes.
func decoderEvents(b []byte, max int, sizes []int) ([]string, error) {
	d := NewDecoder(max)
	defer d.Release()
	src := &chunked{b: b, sizes: sizes}
	var out []string
	for {
		_, rerr := d.Fill(src)
		for {
			name, data, ok, err := d.Next()
			if err != nil {
				return out, err
			}
			if !ok {
				break
			}
			out = append(out, fmt.Sprintf("%q:%q", name, data))
		}
		if rerr != nil {
			return out, d.End()
		}
	}
}

func sameOutcome(t *testing.T, b []byte, max int, sizes []int) {
	t.Helper()
	want, wantErr := readerEvents(b, max)
	got, gotErr := decoderEvents(b, max, sizes)
	if fmt.Sprint(got) != fmt.Sprint(want) || !errors.Is(gotErr, wantErr) {
		t.Fatalf("input %q in reads of %v:\nreader  %v, %v\ndecoder %v, %v", b, sizes, want, wantErr, got, gotErr)
	}
}

func TestDecoderFindsTheEventsReaderFinds(t *testing.T) {
	cases := []struct {
		name string
		in   string
		max  int
	}{
		{"LF framing", "data: a\n\ndata: b\n\n", 0},
		{"CRLF framing", "event: x\r\ndata: a\r\n\r\ndata: b\r\n\r\n", 0},
		{"CR framing", "data: a\r\rdata: b\r\r", 0},
		{"multi-line data and comments", ": hi\ndata: a\ndata: b\nid: 7\nretry: 10\n\n", 0},
		{"a blank line without data resets the name", "event: x\n\ndata: a\n\n", 0},
		{"an event the stream cut before its blank line is dropped", "data: a\n\ndata: b\n", 0},
		{"a line the stream cut is an unexpected end", "data: a\n\ndata: b", 0},
		{"a line longer than the limit", "data: " + string(bytes.Repeat([]byte("x"), 100)) + "\n\n", 32},
		{"an event longer than the limit", "data: aaaaaaaaaa\ndata: bbbbbbbbbb\ndata: cccccccccc\n\n", 30},
		{"a line longer than the read buffer", "data: " + string(bytes.Repeat([]byte("y"), 3*readBufferSize)) + "\n\n", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, sizes := range [][]int{{1 << 20}, {1}, {2, 3}, {7, 1, 13}} {
				sameOutcome(t, []byte(tc.in), tc.max, sizes)
			}
		})
	}
}

// Whatever the bytes and however the reads split them, the decoder finds
// the events, and the end, that Reader finds.
func FuzzDecoderAgreesWithReader(f *testing.F) {
	f.Add([]byte("data: a\r\n\r\nevent: e\rdata: b\r\r: c\ndata: \n\n"), uint8(3), uint8(5), uint8(40))
	f.Add([]byte("data: {\"usage\":1}\n\ndata: [DONE]\n\n"), uint8(1), uint8(1), uint8(0))
	f.Fuzz(func(t *testing.T, b []byte, s1, s2, max uint8) {
		sameOutcome(t, b, int(max), []int{int(s1) + 1, int(s2) + 1})
	})
}

type silent struct{}

func (silent) Read([]byte) (int, error) { return 0, nil }

// A reader that keeps returning nothing ends the stream as broken instead
// of making the relay spin on it.
func TestDecoderGivesUpOnAReaderThatNeverReturnsBytes(t *testing.T) {
	d := NewDecoder(0)
	defer d.Release()
	if _, err := d.Fill(silent{}); !errors.Is(err, io.ErrNoProgress) {
		t.Fatalf("Fill: %v, want io.ErrNoProgress", err)
	}
}
