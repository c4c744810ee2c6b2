package storetest

import (
	"testing"

	"github.com/turnpike-gw/turnpike/internal/store"
)

func newPluginVersion(key, version string) store.NewPluginVersion {
	return store.NewPluginVersion{Key: key, Version: version, Source: "export const meta = {}; // " + version,
		SHA256: "sha-" + version, Origin: "upload", Actor: "root"}
}

var pluginTests = []namedTest{
	{"a first version becomes active and every write moves the revision", func(t *testing.T, s store.Store) {
		p := s.Plugins()
		rev0, err := p.Revision(ctx(t))
		must(t, err, "revision")
		active, err := p.InsertVersion(ctx(t), newPluginVersion("acme", "1.0.0"), false, true, false)
		if err != nil || !active {
			t.Fatalf("first version: active %v, %v", active, err)
		}
		rev1, _ := p.Revision(ctx(t))
		if rev1 == rev0 {
			t.Fatal("storing a version did not move the revision")
		}
		active, err = p.InsertVersion(ctx(t), newPluginVersion("acme", "1.1.0"), false, true, false)
		if err != nil || active {
			t.Fatalf("second version without activate: active %v, %v", active, err)
		}
		_, err = p.InsertVersion(ctx(t), newPluginVersion("acme", "1.1.0"), false, true, false)
		wantErr(t, err, store.ErrConflict, "storing a version twice")
		st, err := p.State(ctx(t), "acme")
		if err != nil || st.ActiveVersion != "1.0.0" || !st.Enabled || st.HeldBack {
			t.Fatalf("state %+v, %v", st, err)
		}
		st.ActiveVersion, st.HeldBack = "1.1.0", true
		must(t, p.SetState(ctx(t), *st), "set state")
		if rev2, _ := p.Revision(ctx(t)); rev2 == rev1 {
			t.Fatal("a state change did not move the revision")
		}
		states, _ := p.States(ctx(t))
		if len(states) != 1 || states[0].ActiveVersion != "1.1.0" || !states[0].HeldBack {
			t.Fatalf("states %+v", states)
		}
		vs, err := p.Versions(ctx(t), "acme")
		if err != nil || len(vs) != 2 || vs[0].Version != "1.0.0" || vs[0].HasIcon || vs[0].SHA256 != "sha-1.0.0" {
			t.Fatalf("versions %+v, %v", vs, err)
		}
		checkUTC(t, "version created_at", vs[0].CreatedAt)
		src, err := p.Source(ctx(t), "acme", "1.0.0")
		if err != nil || src != "export const meta = {}; // 1.0.0" {
			t.Fatalf("source %q, %v", src, err)
		}
		_, err = p.Version(ctx(t), "acme", "9.9.9")
		wantErr(t, err, store.ErrNotFound, "a missing version")
		wantErr(t, p.DeleteVersion(ctx(t), "acme", "1.1.0"), store.ErrActivePluginVersion, "deleting the active version")
		must(t, p.DeleteVersion(ctx(t), "acme", "1.0.0"), "delete an inactive version")
		must(t, p.DeletePlugin(ctx(t), "acme"), "delete the plugin")
		_, err = p.State(ctx(t), "acme")
		wantErr(t, err, store.ErrNotFound, "the state of a deleted plugin")
		wantErr(t, p.DeletePlugin(ctx(t), "acme"), store.ErrNotFound, "deleting it again")
	}},
	{"an icon is reported, not returned", func(t *testing.T, s store.Store) {
		v := newPluginVersion("iconic", "1.0.0")
		v.Icon = []byte{0x89, 'P', 'N', 'G'}
		_, err := s.Plugins().InsertVersion(ctx(t), v, true, true, false)
		must(t, err, "insert")
		got, err := s.Plugins().Version(ctx(t), "iconic", "1.0.0")
		if err != nil || !got.HasIcon {
			t.Fatalf("version %+v, %v", got, err)
		}
	}},
	{"marketplace sources are stored once and the audit log reads newest first", func(t *testing.T, s store.Store) {
		p := s.Plugins()
		_, added, err := p.AddSource(ctx(t), "https://market.example/index.json")
		if err != nil || !added {
			t.Fatalf("add: %v %v", added, err)
		}
		if _, added, _ := p.AddSource(ctx(t), "https://market.example/index.json"); added {
			t.Fatal("the same source was added twice")
		}
		if ok, _ := p.HasSource(ctx(t), "https://market.example/index.json"); !ok {
			t.Fatal("HasSource = false")
		}
		srcs, _ := p.Sources(ctx(t))
		if len(srcs) != 1 {
			t.Fatalf("sources %+v", srcs)
		}
		must(t, p.DeleteSource(ctx(t), "https://market.example/index.json"), "delete source")
		wantErr(t, p.DeleteSource(ctx(t), "https://market.example/index.json"), store.ErrNotFound, "deleting it again")
		must(t, p.Audit(ctx(t), store.PluginAudit{Actor: "root", Action: "upload", Key: "a", Version: "1", Outcome: "ok", Detail: "first"}), "audit")
		long := make([]byte, 3000)
		for i := range long {
			long[i] = 'x'
		}
		must(t, p.Audit(ctx(t), store.PluginAudit{Actor: "root", Action: "delete", Key: "a", Outcome: "ok", Detail: string(long)}), "audit long")
		log, err := p.AuditLog(ctx(t), 10)
		if err != nil || len(log) != 2 || log[0].Action != "delete" || len(log[0].Detail) != 2000 || log[1].Detail != "first" {
			t.Fatalf("audit log %d entries, %v", len(log), err)
		}
	}},
}
