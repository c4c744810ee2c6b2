package manifest

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// FuzzValidate feeds arbitrary JSON as meta: validation must never panic,
// must return either a manifest or problems (never both, never neither), and
// a manifest it accepts must marshal.
func FuzzValidate(f *testing.F) {
	paths, _ := filepath.Glob("testdata/plugins/*.json")
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		var fx fixture
		if err := json.Unmarshal(data, &fx); err != nil {
			f.Fatal(err)
		}
		meta, _ := json.Marshal(fx.Meta)
		f.Add(meta)
	}
	for _, seed := range []string{`null`, `{}`, `[]`, `"meta"`, `{"apiVersion":1e400}`, `{"routes":[{"path":"/:a/:a"}]}`,
		`{"description":{"en":"\u0000"}}`, `{"usageProfiles":[{"models":["x"],"schema":{"t":{"type":"number","unit":"token"}}}]}`,
		`{"protocols":["std_video",{"name":"openai_video"},{"name":"std_responses","supports":[]}]}`} {
		f.Add([]byte(seed))
	}
	functions := []string{"buildSubmitRequest", "parseSubmitResponse", "buildQueryRequest", "parseTaskResult",
		"native.decodeCreate", "native.created", "native.status", "native.decodeSubmit", "native.renderTask",
		"protocols.std_video.decodeRequest", "protocols.std_video.render"}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, useNumber := range []bool{false, true} {
			dec := json.NewDecoder(bytes.NewReader(data))
			if useNumber {
				dec.UseNumber()
			}
			var meta any
			if dec.Decode(&meta) != nil {
				return
			}
			m, problems := Validate(Exports{Meta: meta, Functions: functions, Names: []string{"meta"}})
			if (m == nil) == (len(problems) == 0) {
				t.Fatalf("manifest %v with problems %v", m != nil, problems)
			}
			if m != nil {
				if _, err := json.Marshal(m); err != nil {
					t.Fatal(err)
				}
				_ = m.ProfileFor("a", "b")
				_ = Conflicts(m, []*Manifest{m, {Key: "other", Routes: m.Routes, ChannelTypes: m.ChannelTypes}})
			}
		}
	})
}
