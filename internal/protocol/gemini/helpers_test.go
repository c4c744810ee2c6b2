package gemini

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/ir"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// golden compares got with the file at path, or rewrites it with -update.
func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	got = append(bytes.TrimSpace(got), '\n')
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("missing golden %s (run go test -update): %v", path, err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("%s differs from the golden file\n--- got\n%s--- want\n%s", path, got, want)
	}
}

func indentJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func indentRaw(t *testing.T, raw []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, raw)
	}
	return b.Bytes()
}

func fixtures(t *testing.T, pattern string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", pattern))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures match %s", pattern)
	}
	var out []string
	for _, f := range files {
		if !strings.Contains(filepath.Base(f), ".golden") {
			out = append(out, f)
		}
	}
	return out
}

// goldenPath names the golden file derived from a fixture.
func goldenPath(fixture, suffix string) string {
	ext := filepath.Ext(fixture)
	base := strings.TrimSuffix(fixture, ext)
	base = strings.TrimSuffix(base, ".ir")
	base = strings.TrimSuffix(base, ".events")
	return base + ".golden." + suffix
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Event fixtures use names instead of the IR's numeric enums, so the files
// can be read and reviewed by eye.
var eventNames = map[ir.EventType]string{
	ir.EventStart: "start", ir.EventBlockStart: "block_start", ir.EventDelta: "delta",
	ir.EventBlockStop: "block_stop", ir.EventStop: "stop", ir.EventUsage: "usage",
	ir.EventDone: "done", ir.EventPing: "ping",
}

var blockNames = map[ir.BlockKind]string{
	ir.BlockText: "text", ir.BlockThinking: "thinking", ir.BlockToolCall: "tool_call",
	ir.BlockRedactedThinking: "redacted_thinking",
}

type eventJSON struct {
	Type           string
	Index          int       `json:",omitempty"`
	Block          string    `json:",omitempty"`
	ID             string    `json:",omitempty"`
	Model          string    `json:",omitempty"`
	ToolCallID     string    `json:",omitempty"`
	ToolName       string    `json:",omitempty"`
	Text           string    `json:",omitempty"`
	ArgumentsDelta string    `json:",omitempty"`
	Signature      string    `json:",omitempty"`
	StopReason     string    `json:",omitempty"`
	Usage          *ir.Usage `json:",omitempty"`
}

func toEventJSON(ev ir.Event) eventJSON {
	return eventJSON{Type: eventNames[ev.Type], Index: ev.Index, Block: blockNames[ev.Block],
		ID: ev.ID, Model: ev.Model, ToolCallID: ev.ToolCallID, ToolName: ev.ToolName,
		Text: ev.Text, ArgumentsDelta: ev.ArgumentsDelta, Signature: ev.Signature,
		StopReason: string(ev.StopReason), Usage: ev.Usage}
}

func fromEventJSON(t *testing.T, e eventJSON) ir.Event {
	t.Helper()
	ev := ir.Event{Index: e.Index, ID: e.ID, Model: e.Model, ToolCallID: e.ToolCallID,
		ToolName: e.ToolName, Text: e.Text, ArgumentsDelta: e.ArgumentsDelta,
		Signature: e.Signature, StopReason: ir.StopReason(e.StopReason), Usage: e.Usage}
	for k, v := range eventNames {
		if v == e.Type {
			ev.Type = k
		}
	}
	for k, v := range blockNames {
		if v == e.Block {
			ev.Block = k
		}
	}
	if ev.Type == 0 {
		t.Fatalf("unknown event type %q", e.Type)
	}
	return ev
}

// eventLines renders events one per line.
func eventLines(t *testing.T, evs []ir.Event) []byte {
	t.Helper()
	var b bytes.Buffer
	b.WriteString("[\n")
	for i, ev := range evs {
		line, err := json.Marshal(toEventJSON(ev))
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString("  ")
		b.Write(line)
		if i < len(evs)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("]")
	return b.Bytes()
}

// sinkRecorder collects encoded stream chunks.
type sinkRecorder struct{ events [][]byte }

func (s *sinkRecorder) Event(name string, data []byte) error {
	if name != "" {
		return fmt.Errorf("unexpected event name %q", name)
	}
	s.events = append(s.events, append([]byte(nil), data...))
	return nil
}

func (s *sinkRecorder) lines() []byte {
	return append(bytes.Join(s.events, []byte("\n")), '\n')
}

// decodeStream feeds each line of data to a fresh decoder and returns every
// IR event, including Finish's.
func decodeStream(lines [][]byte) ([]ir.Event, error) {
	d := Generate.NewStreamDecoder()
	var evs []ir.Event
	emit := func(ev ir.Event) error { evs = append(evs, ev); return nil }
	for _, l := range lines {
		if err := d.Decode("", l, emit); err != nil {
			return evs, err
		}
	}
	return evs, d.Finish(emit)
}

func splitLines(b []byte) [][]byte {
	var out [][]byte
	for _, l := range bytes.Split(b, []byte("\n")) {
		if len(bytes.TrimSpace(l)) > 0 {
			out = append(out, l)
		}
	}
	return out
}

func asIRError(t *testing.T, err error) *ir.Error {
	t.Helper()
	var e *ir.Error
	if !errors.As(err, &e) {
		t.Fatalf("want *ir.Error, got %T %v", err, err)
	}
	return e
}
