package loadtest

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// errNoDone is returned for a stream that ended without "data: [DONE]".
var errNoDone = errors.New("stream ended without [DONE]")

// maxEventLine bounds one SSE line so a broken server cannot make the
// client buffer without limit.
const maxEventLine = 1 << 20

// readSSE calls onData with the payload of each "data:" line of an
// OpenAI-style event stream until the [DONE] event, which it does not pass
// on. Other SSE fields (event, id, comments) are skipped.
func readSSE(r io.Reader, onData func(payload []byte)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxEventLine)
	for sc.Scan() {
		payload, ok := bytes.CutPrefix(sc.Bytes(), []byte("data:"))
		if !ok {
			continue
		}
		payload = bytes.TrimSpace(payload)
		if bytes.Equal(payload, []byte("[DONE]")) {
			return nil
		}
		onData(payload)
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return errNoDone
}
