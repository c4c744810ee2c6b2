package relay

import (
	"strings"
	"sync"

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
	bufs *keptBufs
	// frozen: the client left, so what the upstream sends after is not
	// delivered text and is not counted.
	frozen bool
}

// freeze stops keeping text: the client left.
func (a *keptAnswer) freeze() { a.frozen = true }

// release returns the event buffers for another stream; the answer must
// not be read after it.
func (a *keptAnswer) release() {
	if a.bufs == nil {
		return
	}
	if cap(a.raw) <= maxPooledKept {
		a.bufs.raw, a.bufs.ends = a.raw[:0], a.ends[:0]
		keptPool.Put(a.bufs)
	}
	a.bufs, a.raw, a.ends = nil, nil, nil
}

// keptBufs are the raw-event buffers of one stream, reused by the next
// once the answer is settled: nearly every stream keeps every event until
// its usage arrives last, and then needs none of them.
type keptBufs struct {
	raw  []byte
	ends []int
}

var keptPool = sync.Pool{New: func() any { return &keptBufs{raw: make([]byte, 0, 8<<10), ends: make([]int, 0, 128)} }}

// maxPooledKept leaves a rare huge answer's buffers to the collector.
const maxPooledKept = 256 << 10

func (a *keptAnswer) keepEvent(name string, data []byte) {
	if a.frozen {
		return
	}
	if len(a.raw)+len(data) > maxKeptEvents {
		a.text = a.sp.AppendStreamText(a.text, name, data)
		return
	}
	if a.bufs == nil {
		a.bufs = keptPool.Get().(*keptBufs)
		a.raw, a.ends = a.bufs.raw[:0], a.bufs.ends[:0]
	}
	// Names are not kept: every format's text events are recognisable by
	// their data alone.
	a.raw = append(a.raw, data...)
	a.ends = append(a.ends, len(a.raw))
}

func (a *keptAnswer) addText(s string) {
	if !a.frozen {
		a.text = append(a.text, s...)
	}
}

// kept reports whether any answer text may be held, so an answer with none
// is never counted (and the tokenizer never loaded for it).
func (a *keptAnswer) kept() bool { return len(a.ends) > 0 || len(a.text) > 0 }

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
