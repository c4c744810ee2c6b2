package storetest

import (
	"reflect"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/store"
)

var mcpTests = []namedTest{
	{"an MCP server is stored with its headers, price and tool subset, and updated and deleted by id", func(t *testing.T, s store.Store) {
		r := s.MCP()
		v := &store.MCPServer{Name: "files", URL: "http://127.0.0.1:9/mcp", Headers: map[string]string{"Authorization": "Bearer up-secret"},
			TimeoutSeconds: 30, PricePerCallUSD: 0.002, Tools: []string{"read"}}
		must(t, r.CreateServer(ctx(t), v), "create")
		if v.ID == 0 {
			t.Fatal("no id assigned")
		}
		got, err := r.GetServer(ctx(t), v.ID)
		must(t, err, "get")
		if got.Name != "files" || got.Headers["Authorization"] != "Bearer up-secret" || got.TimeoutSeconds != 30 ||
			got.PricePerCallUSD != 0.002 || !reflect.DeepEqual(got.Tools, []string{"read"}) {
			t.Fatalf("stored %+v", got)
		}
		got.Tools, got.Name = nil, "files2"
		must(t, r.UpdateServer(ctx(t), got), "update")
		list, err := r.ListServers(ctx(t))
		must(t, err, "list")
		if len(list) != 1 || list[0].Tools != nil || list[0].Name != "files2" {
			t.Fatalf("after update: %+v (tools nil means every tool)", list)
		}
		must(t, r.DeleteServer(ctx(t), v.ID), "delete")
		_, err = r.GetServer(ctx(t), v.ID)
		wantErr(t, err, store.ErrNotFound, "get a deleted server")
		wantErr(t, r.DeleteServer(ctx(t), v.ID), store.ErrNotFound, "delete twice")
	}},
	{"two MCP servers may not share a name", func(t *testing.T, s store.Store) {
		must(t, s.MCP().CreateServer(ctx(t), &store.MCPServer{Name: "a", URL: "http://x"}), "create")
		wantErr(t, s.MCP().CreateServer(ctx(t), &store.MCPServer{Name: "a", URL: "http://y"}), store.ErrConflict, "second create")
	}},
	{"a grant is put, replaced and deleted per subject", func(t *testing.T, s store.Store) {
		r := s.MCP()
		_, err := r.Grant(ctx(t), store.SubjectToken, "7")
		wantErr(t, err, store.ErrNotFound, "grant of a subject without one")
		must(t, r.PutGrant(ctx(t), store.MCPGrant{Kind: store.SubjectToken, Subject: "7", Servers: []string{"a"}}), "put")
		must(t, r.PutGrant(ctx(t), store.MCPGrant{Kind: store.SubjectToken, Subject: "7", Servers: []string{"a", "b"}, Tools: []string{"a__x"}}), "replace")
		must(t, r.PutGrant(ctx(t), store.MCPGrant{Kind: store.SubjectUser, Subject: "7", Servers: []string{}}), "put user")
		g, err := r.Grant(ctx(t), store.SubjectToken, "7")
		must(t, err, "grant")
		if !reflect.DeepEqual(g.Servers, []string{"a", "b"}) || !reflect.DeepEqual(g.Tools, []string{"a__x"}) {
			t.Fatalf("grant %+v", g)
		}
		all, err := r.Grants(ctx(t))
		if err != nil || len(all) != 2 {
			t.Fatalf("Grants = %+v, %v", all, err)
		}
		must(t, r.PutGrant(ctx(t), store.MCPGrant{Kind: store.SubjectToken, Subject: "7"}), "delete")
		_, err = r.Grant(ctx(t), store.SubjectToken, "7")
		wantErr(t, err, store.ErrNotFound, "grant after delete")
	}},
}
