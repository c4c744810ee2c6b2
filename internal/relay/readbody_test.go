package relay

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/iotest"
)

func TestReadAllSizedReadsWhatTheReaderHoldsWhateverTheDeclaredLength(t *testing.T) {
	body := bytes.Repeat([]byte("0123456789"), 5000) // 50,000 bytes
	for _, tc := range []struct {
		name     string
		declared int64
		r        io.Reader
	}{
		{"declared exactly", 50000, bytes.NewReader(body)},
		{"unknown length", -1, bytes.NewReader(body)},
		{"declared too short", 10, bytes.NewReader(body)},
		{"declared too long", 90000, bytes.NewReader(body)},
		{"one byte a read", 50000, iotest.OneByteReader(bytes.NewReader(body))},
		{"data with EOF", 50000, iotest.DataErrReader(bytes.NewReader(body))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readAllSized(tc.r, tc.declared, 32<<20)
			if err != nil || !bytes.Equal(got, body) {
				t.Fatalf("read %d bytes (err %v), want the %d the reader holds", len(got), err, len(body))
			}
		})
	}
}

func TestADeclaredLengthBuysAtMostTheBoundedFirstBuffer(t *testing.T) {
	got, err := readAllSized(bytes.NewReader([]byte("hi")), 32<<20, 32<<20)
	if err != nil || string(got) != "hi" || cap(got) > presizeMax+1 {
		t.Fatalf("read %q (cap %d, err %v): a declared 32 MB must not be allocated before it arrives", got, cap(got), err)
	}
}

func TestReadAllSizedPassesOnAReadError(t *testing.T) {
	boom := errors.New("connection reset")
	got, err := readAllSized(io.MultiReader(bytes.NewReader([]byte("abc")), iotest.ErrReader(boom)), 100, 1000)
	if !errors.Is(err, boom) || string(got) != "abc" {
		t.Fatalf("read %q, err %v; want what came before the error and the error", got, err)
	}
}

func TestABodyPastTheLimitIsRefusedWhateverItDeclares(t *testing.T) {
	for _, declared := range []int64{-1, 10, 2000} {
		r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", bytes.NewReader(make([]byte, 2000)))
		r.ContentLength = declared
		if _, err := readLimited(httptest.NewRecorder(), r, 1000); err == nil || err.Status != 413 {
			t.Fatalf("declared %d: err %v, want 413", declared, err)
		}
	}
}
