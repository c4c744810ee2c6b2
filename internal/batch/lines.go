package batch

import (
	"bufio"
	"context"
	"errors"
	"io"
)

// maxLineBytes bounds one line of an input file; a request body past the
// relay's own limit would be refused anyway.
const maxLineBytes = 64 << 20

// errLineTooLong is a line past maxLineBytes.
var errLineTooLong = errors.New("line too long")

// eachLine calls fn with every non-blank line of the file id (numbered from
// 1, blank lines counted) while holding only one line in memory. fn may
// stop the walk by returning errStop.
func (s *Service) eachLine(ctx context.Context, id string, fn func(n int, line []byte) error) error {
	rc, err := s.Blobs.Open(ctx, id)
	if err != nil {
		return err
	}
	defer rc.Close()
	br := bufio.NewReaderSize(rc, 64<<10)
	for n := 1; ; n++ {
		line, err := readLine(br)
		if len(trimSpace(line)) > 0 {
			if ferr := fn(n, line); ferr != nil {
				if errors.Is(ferr, errStop) {
					return nil
				}
				return ferr
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

var errStop = errors.New("stop")

// readLines calls fn with every non-blank line of r.
func readLines(r io.Reader, fn func(line []byte) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := readLine(br)
		if len(trimSpace(line)) > 0 {
			if ferr := fn(line); ferr != nil {
				return ferr
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// readLine reads one line without its end, however long, up to
// maxLineBytes.
func readLine(br *bufio.Reader) ([]byte, error) {
	var out []byte
	for {
		part, err := br.ReadSlice('\n')
		out = append(out, part...)
		if len(out) > maxLineBytes {
			return nil, errLineTooLong
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if len(out) > 0 && out[len(out)-1] == '\n' {
			out = out[:len(out)-1]
			if len(out) > 0 && out[len(out)-1] == '\r' {
				out = out[:len(out)-1]
			}
		}
		return out, err
	}
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\r') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}
