package sse

import (
	"bytes"
	"io"
)

// WriteEvent frames one event and writes it with a single Write call, so a
// flush after it sends a whole event. name may be empty for the default
// "message" event. Multi-line data is split into several data lines.
func WriteEvent(w io.Writer, buf *bytes.Buffer, name string, data []byte) error {
	buf.Reset()
	AppendEvent(buf, name, data)
	_, err := w.Write(buf.Bytes())
	return err
}

// AppendEvent frames one event as WriteEvent does and appends it to buf, so
// a writer can send several events with one Write.
func AppendEvent(buf *bytes.Buffer, name string, data []byte) {
	if name != "" {
		buf.WriteString("event: ")
		buf.WriteString(name)
		buf.WriteByte('\n')
	}
	for {
		i := bytes.IndexByte(data, '\n')
		buf.WriteString("data: ")
		if i < 0 {
			buf.Write(data)
			buf.WriteByte('\n')
			break
		}
		buf.Write(bytes.TrimSuffix(data[:i], []byte("\r")))
		buf.WriteByte('\n')
		data = data[i+1:]
	}
	buf.WriteByte('\n')
}
