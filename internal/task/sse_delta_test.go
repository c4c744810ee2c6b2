package task

import (
	"encoding/json"
	"testing"
)

func TestDeltaDocTracksItsEncodedSizeAndNodes(t *testing.T) {
	tests := []struct {
		name    string
		changes string
		want    string
	}{
		{"set creates missing objects on the way", `[{"op":"set","path":["a","b"],"value":1}]`, `{"a":{"b":1}}`},
		{"append creates the array", `[{"op":"append","path":["l"],"value":"x"},{"op":"append","path":["l"],"value":{"y":[]}}]`, `{"l":["x",{"y":[]}]}`},
		{"appendText escapes like the encoder", `[{"op":"appendText","path":["s"],"value":"<a>"},{"op":"appendText","path":["s"],"value":"\"\n"}]`, `{"s":"\u003ca\u003e\"\n"}`},
		{"set replaces a subtree", `[{"op":"set","path":["a"],"value":[1,2,3]},{"op":"set","path":["a"],"value":"z"}]`, `{"a":"z"}`},
		{"set inside an array", `[{"op":"set","path":["a"],"value":[1,2]},{"op":"set","path":["a",1],"value":null}]`, `{"a":[1,null]}`},
		{"root replacement", `[{"op":"set","path":["a"],"value":1},{"op":"set","path":[],"value":[true]}]`, `[true]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var raw any
			_ = json.Unmarshal([]byte(tt.changes), &raw)
			cs, err := parseChanges(raw)
			if err != nil {
				t.Fatal(err)
			}
			d := &deltaDoc{}
			for _, c := range cs {
				if err := d.apply(c); err != nil {
					t.Fatal(err)
				}
			}
			got, _ := json.Marshal(d.root)
			if string(got) != tt.want {
				t.Errorf("result = %s, want %s", got, tt.want)
			}
			assertCounters(t, d)
		})
	}
}

func assertCounters(t *testing.T, d *deltaDoc) {
	t.Helper()
	if !d.set {
		return
	}
	enc, err := json.Marshal(d.root)
	if err != nil {
		t.Fatal(err)
	}
	nodes, _ := countNodes(d.root)
	if d.size != int64(len(enc)) || d.nodes != nodes {
		t.Fatalf("tracked size %d nodes %d, actual %d and %d for %s", d.size, d.nodes, len(enc), nodes, enc)
	}
}

// FuzzDeltaApplier applies arbitrary change lists: nothing panics, the
// tracked size and node count always equal the real ones, and an accepted
// result never exceeds the limits.
func FuzzDeltaApplier(f *testing.F) {
	f.Add([]byte(`[{"op":"set","path":[],"value":{"a":[]}}]`), []byte(`[{"op":"append","path":["a"],"value":"x"},{"op":"appendText","path":["a",0],"value":"y"}]`))
	f.Add([]byte(`[{"op":"set","path":["a","b","c"],"value":[1,[2]]}]`), []byte(`[{"op":"set","path":["a","b","c",1,0],"value":"<>&\u2028"}]`))
	f.Add([]byte(`[{"op":"appendText","path":["t"],"value":"é"}]`), []byte(`[{"op":"set","path":[],"value":null},{"op":"append","path":["x"],"value":{}}]`))
	f.Fuzz(func(t *testing.T, first, second []byte) {
		d := &deltaDoc{}
		for _, raw := range [][]byte{first, second} {
			v, err := DecodeJSON(raw)
			if err != nil {
				return
			}
			cs, err := parseChanges(v)
			if err != nil {
				return
			}
			for _, c := range cs {
				err := d.apply(c)
				assertCounters(t, d)
				if err != nil {
					return
				}
				if d.size > maxSSEResultBytes || d.nodes > maxDeltaNodes {
					t.Fatalf("accepted a result over the limits")
				}
			}
		}
	})
}
