package relay

import (
	"strings"
	"sync"

	"github.com/turnpike-gw/turnpike/internal/protocol"
)

// maxKeptRaw bounds the raw events one stream keeps for counting its
// answer's tokens. Past it, the text of the kept events is extracted (a
// twentieth of their size, the rest is JSON framing) and the buffer starts
// over, so a long answer held open costs tens of KB, not megabytes, while
// answers shorter than this (most) are never parsed when usage comes.
const maxKeptRaw = 32 << 10

// keptAnswer keeps what counting an answer's tokens needs should the
// upstream report no usage, or the client leave before the end (it is then
// billed what it was delivered). Both are rare, so a passed-through stream
// keeps its events raw (bounded) and the text is parsed out of them only
// when it is needed, instead of on every event.
type keptAnswer struct {
	// sp reads the text out of kept raw events.
	sp protocol.StreamPassthrough
	// text is the answer's text before the kept raw events (extracted
	// when the buffer was full, or added by a converting stream).
	text []byte
	raw  []byte
	ends []uint32
	bufs *keptBufs
}

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
// once the answer is settled: every stream keeps every event it delivers,
// and once settled needs none of them.
type keptBufs struct {
	raw  []byte
	ends []uint32
}

// keptPool starts buffers small and lets them grow to what answers need:
// every open stream holds its own until it ends, so a fixed large start
// would be paid by each of thousands of short open answers.
var keptPool = sync.Pool{New: func() any { return &keptBufs{raw: make([]byte, 0, 2<<10), ends: make([]uint32, 0, 16)} }}

// maxPooledKept leaves buffers grown for a rare huge event to the collector.
const maxPooledKept = 2 * maxKeptRaw

func (a *keptAnswer) keepEvent(_ string, data []byte) {
	if len(a.raw)+len(data) > maxKeptRaw && len(a.ends) > 0 {
		a.text = a.appendKeptText(a.text)
		a.raw, a.ends = a.raw[:0], a.ends[:0]
	}
	if a.bufs == nil {
		a.bufs = keptPool.Get().(*keptBufs)
		a.raw, a.ends = a.bufs.raw[:0], a.bufs.ends[:0]
	}
	// Names are not kept: every format's text events are recognisable by
	// their data alone.
	a.raw = append(a.raw, data...)
	a.ends = append(a.ends, uint32(len(a.raw)))
}

// appendKeptText appends the text of the kept raw events to dst.
func (a *keptAnswer) appendKeptText(dst []byte) []byte {
	start := uint32(0)
	for _, end := range a.ends {
		dst = a.sp.AppendStreamText(dst, "", a.raw[start:end])
		start = end
	}
	return dst
}

// addText adds text after everything kept so far: the kept raw events'
// text moves into text first (a continued native stream adds its second
// upstream's text after the first's raw events).
func (a *keptAnswer) addText(s string) {
	if len(a.ends) > 0 {
		a.text = a.appendKeptText(a.text)
		a.raw, a.ends = a.raw[:0], a.ends[:0]
	}
	a.text = append(a.text, s...)
}

// kept reports whether any answer text may be held, so an answer with none
// is never counted (and the tokenizer never loaded for it).
func (a *keptAnswer) kept() bool { return len(a.ends) > 0 || len(a.text) > 0 }

// String returns the kept answer text in the order it came.
func (a *keptAnswer) String() string {
	var b strings.Builder
	b.Grow(len(a.text) + len(a.raw)/8)
	b.Write(a.text)
	b.Write(a.appendKeptText(nil))
	return b.String()
}
