package cohere

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol/golden"
)

// checkEvents is the shape every decoded stream must have, whatever the
// upstream sent: Start first; blocks numbered densely from 0 and built one
// at a time; deltas only into the open block and of its kind; nothing after
// Done.
type checkEvents struct {
	started, done bool
	next          int
	open          ir.BlockKind
}

func (c *checkEvents) emit(ev ir.Event) error {
	switch {
	case c.done:
		return fmt.Errorf("event %d after Done", ev.Type)
	case !c.started && ev.Type != ir.EventStart:
		return fmt.Errorf("event %d before Start", ev.Type)
	}
	switch ev.Type {
	case ir.EventStart:
		if c.started {
			return fmt.Errorf("a second Start")
		}
		c.started = true
	case ir.EventBlockStart:
		if c.open != 0 || ev.Index != c.next {
			return fmt.Errorf("block %d started with block open %d, next %d", ev.Index, c.open, c.next)
		}
		if ev.Block == ir.BlockToolCall && (ev.ToolName == "" || ev.ToolCallID == "") {
			return fmt.Errorf("a tool call block without a name or id")
		}
		c.open, c.next = ev.Block, c.next+1
	case ir.EventDelta:
		if c.open == 0 || ev.Index != c.next-1 || ev.Block != c.open {
			return fmt.Errorf("delta into block %d (%d) while %d (%d) is open", ev.Index, ev.Block, c.next-1, c.open)
		}
		if (ev.Block == ir.BlockToolCall) != (ev.ArgumentsDelta != "") {
			return fmt.Errorf("delta of block kind %d carries the wrong field", ev.Block)
		}
	case ir.EventBlockStop:
		if c.open == 0 || ev.Index != c.next-1 {
			return fmt.Errorf("stop of block %d that is not open", ev.Index)
		}
		c.open = 0
	case ir.EventStop:
		if c.open != 0 {
			return fmt.Errorf("Stop with a block open")
		}
	case ir.EventUsage:
		if ev.Usage == nil || ev.Usage.InputTokens < 0 || ev.Usage.OutputTokens < 0 {
			return fmt.Errorf("usage %+v", ev.Usage)
		}
	case ir.EventDone:
		c.done = true
	}
	return nil
}

// The input is split into events, one a line: "name\tdata". Any sequence
// decodes without panicking into a well-formed IR stream, or fails with an
// *ir.Error.
func FuzzStreamDecoder(f *testing.F) {
	for _, seed := range golden.StreamSeeds() {
		f.Add(seed)
	}
	f.Add([]byte("tool-call-start\t{\"delta\":{\"message\":{\"tool_calls\":[{\"function\":{\"name\":\"f\"}}]}}}\nmessage-end\t{\"delta\":{\"usage\":{\"tokens\":{\"input_tokens\":-3}}}}\n"))
	f.Fuzz(func(t *testing.T, input []byte) {
		dec := V2.NewStreamDecoder()
		chk := &checkEvents{}
		var err error
		for _, line := range bytes.Split(input, []byte("\n")) {
			name, data, _ := bytes.Cut(line, []byte("\t"))
			if err = dec.Decode(string(name), data, chk.emit); err != nil {
				break
			}
		}
		if err == nil {
			err = dec.Finish(chk.emit)
		}
		if err != nil {
			if _, ok := err.(*ir.Error); !ok {
				t.Fatalf("failed with a non-IR error: %v", err)
			}
			return
		}
		if !chk.done {
			t.Fatal("a stream that finished without error has no Done")
		}
	})
}
