package manifest

import (
	"strings"
	"testing"
)

func installed(key, version string, channelTypes []int, routes ...Route) *Manifest {
	return &Manifest{Key: key, Version: version, ChannelTypes: channelTypes, Routes: routes,
		Protocols: []ProtocolClaim{{Name: ProtocolVideo}}}
}

func TestConflicts(t *testing.T) {
	kling := installed("kling", "1.0.0", []int{50},
		Route{Method: "POST", Path: "/kling/v1/videos"},
		Route{Method: "GET", Path: "/kling/v1/videos/:task_id"})
	tests := []struct {
		name      string
		candidate *Manifest
		want      []string
	}{
		{"disjoint plugin", installed("vidu", "1.0.0", []int{52}, Route{Method: "POST", Path: "/vidu/v1/videos"}), nil},
		{"shared protocol claim is not a conflict", installed("other", "1.0.0", nil), nil},
		{"newer version of the same key", installed("kling", "1.1.0", []int{50}, Route{Method: "POST", Path: "/kling/v1/videos"}), nil},
		{"channel type owned elsewhere", installed("copy", "1.0.0", []int{52, 50}),
			[]string{"meta.channelTypes[1]|kling@1.0.0"}},
		{"route shape taken", installed("copy", "1.0.0", nil, Route{Method: "GET", Path: "/kling/v1/videos/:id"}),
			[]string{"meta.routes[0]|kling@1.0.0"}},
		{"same path other method", installed("copy", "1.0.0", nil, Route{Method: "PUT", Path: "/kling/v1/videos"}), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Conflicts(tc.candidate, []*Manifest{nil, kling})
			if len(got) != len(tc.want) {
				t.Fatalf("conflicts = %v, want %v", got, tc.want)
			}
			for i, w := range tc.want {
				path, fragment, _ := strings.Cut(w, "|")
				if got[i].Path != path || !strings.Contains(got[i].Message, fragment) {
					t.Errorf("conflict %d = %v, want %s", i, got[i], w)
				}
			}
		})
	}
	if Conflicts(nil, []*Manifest{kling}) != nil {
		t.Error("nil candidate has no conflicts")
	}
}
