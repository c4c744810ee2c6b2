package relay

import (
	"strings"

	"github.com/turnpike-gw/turnpike/internal/protocol"
)

// maxKeptEvents bounds the raw events kept for counting an answer's tokens
// when the upstream reports no usage; past it, text is extracted at once.
const maxKeptEvents = 4 << 20

// keptAnswer keeps what counting an answer's tokens needs should the
// upstream report no usage. Usage almost always arrives, so a passed-through
// stream keeps its events raw (bounded) and the text is parsed out of them
// only when it is needed, instead of on every event.
type keptAnswer struct {
	// sp reads the text out of kept raw events.
	sp   protocol.StreamPassthrough
	raw  []byte
	ends []int
	text []byte
}

func (a *keptAnswer) keepEvent(name string, data []byte) {
	if len(a.raw)+len(data) > maxKeptEvents {
		a.text = a.sp.AppendStreamText(a.text, name, data)
		return
	}
	// Names are not kept: every format's text events are recognisable by
	// their data alone.
	a.raw = append(a.raw, data...)
	a.ends = append(a.ends, len(a.raw))
}

func (a *keptAnswer) addText(s string) { a.text = append(a.text, s...) }

// String returns the kept answer text: that of kept events, then the rest.
func (a *keptAnswer) String() string {
	var out []byte
	start := 0
	for _, end := range a.ends {
		out = a.sp.AppendStreamText(out, "", a.raw[start:end])
		start = end
	}
	var b strings.Builder
	b.Grow(len(out) + len(a.text))
	b.Write(out)
	b.Write(a.text)
	return b.String()
}
