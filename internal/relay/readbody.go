package relay

import "io"

// presizeMax is the largest declared length that buys a first buffer of
// its size: a client that declares 32 MB and sends nothing must not make
// the gateway hold 32 MB for it, and io.ReadAll grows large bodies with
// fewer copies than doubling from a fixed start would. Most chat bodies
// are below it.
const presizeMax = 64 << 10

// readAllSized is io.ReadAll with the first buffer sized from the
// request's declared length when that is at most presizeMax: io.ReadAll
// starts at 512 bytes and grows by copying, which for a 32 KB prompt is a
// dozen allocations and the prompt copied twice over. A wrong length only
// costs growth; the reader (net/http's body under http.MaxBytesReader)
// still decides where the body ends.
func readAllSized(r io.Reader, declared, limit int64) ([]byte, error) {
	if declared <= 0 || declared > min(limit, presizeMax) {
		return io.ReadAll(r)
	}
	b := make([]byte, 0, declared+1) // +1: the read that finds the end needs room
	for {
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // longer than declared: let append pick the next size
		}
	}
}
