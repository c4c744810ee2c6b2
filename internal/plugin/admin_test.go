package plugin

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/store"
)

const testRootToken = "root-token-for-plugin-tests"

// adminEnv is the plugin API over a fresh database.
type adminEnv struct {
	t   *testing.T
	reg *Registry
	st  interface {
		Channels() store.ChannelRepo
	}
	mux *http.ServeMux
}

func newAdminEnv(t *testing.T) *adminEnv {
	t.Helper()
	reg, st := newTestRegistry(t)
	api := NewAdminAPI(AdminDeps{Registry: reg, RootToken: testRootToken, Sessions: fakeSessions})
	mux := http.NewServeMux()
	api.Register(mux)
	return &adminEnv{t: t, reg: reg, st: st, mux: mux}
}

// fakeSessions treats the cookie value as the signed-in user's role.
func fakeSessions(r *http.Request) (*auth.Principal, bool) {
	c, err := r.Cookie(auth.SessionCookie)
	if err != nil {
		return nil, false
	}
	return &auth.Principal{UserID: 7, Username: c.Value + "-user", Role: c.Value}, true
}

// caller identities used by the tests.
const (
	asRoot        = "root-token"
	asRootSession = "root-session"
	asAdmin       = "admin-session"
	asNobody      = ""
)

type resp struct {
	status int
	body   map[string]any
	raw    string
}

func (e *adminEnv) do(who, method, path string, body any) resp {
	e.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req := httptest.NewRequest(method, path, rd)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return e.send(who, req)
}

func (e *adminEnv) send(who string, req *http.Request) resp {
	e.t.Helper()
	switch who {
	case asRoot:
		req.Header.Set("Authorization", "Bearer "+testRootToken)
	case asRootSession:
		req.AddCookie(&http.Cookie{Name: auth.SessionCookie, Value: store.RoleRoot})
	case asAdmin:
		req.AddCookie(&http.Cookie{Name: auth.SessionCookie, Value: store.RoleAdmin})
	}
	w := httptest.NewRecorder()
	e.mux.ServeHTTP(w, req)
	out := resp{status: w.Code, raw: w.Body.String()}
	_ = json.Unmarshal(w.Body.Bytes(), &out.body)
	return out
}

func (e *adminEnv) want(r resp, status int) resp {
	e.t.Helper()
	if r.status != status {
		e.t.Fatalf("status %d, want %d; body %s", r.status, status, r.raw)
	}
	return r
}

func errCode(r resp) string {
	e, _ := r.body["error"].(map[string]any)
	s, _ := e["code"].(string)
	return s
}

func TestAdminRoutesNeedRoot(t *testing.T) {
	e := newAdminEnv(t)
	routes := []struct{ method, path string }{
		{"POST", "/api/plugin/task"}, {"GET", "/api/plugin/task"}, {"POST", "/api/plugin/task/dry-run"},
		{"GET", "/api/plugin/task/runtime/status"}, {"GET", "/api/plugin/task/marketplace"},
		{"GET", "/api/plugin/task/marketplace/sources"}, {"POST", "/api/plugin/task/marketplace/sources"},
		{"DELETE", "/api/plugin/task/marketplace/sources?url=x"}, {"POST", "/api/plugin/task/marketplace/install"},
		{"GET", "/api/plugin/task/acme-video"}, {"GET", "/api/plugin/task/acme-video/source"},
		{"POST", "/api/plugin/task/acme-video/activate"}, {"POST", "/api/plugin/task/acme-video/status"},
		{"DELETE", "/api/plugin/task/acme-video"}, {"DELETE", "/api/plugin/task/acme-video/versions/1.0.0"},
	}
	for _, rt := range routes {
		t.Run(rt.method+" "+rt.path, func(t *testing.T) {
			if r := e.do(asNobody, rt.method, rt.path, nil); r.status != 401 || errCode(r) != "unauthorized" {
				t.Errorf("anonymous: %d %s, want 401 unauthorized", r.status, r.raw)
			}
			if r := e.do(asAdmin, rt.method, rt.path, nil); r.status != 403 || errCode(r) != "forbidden" {
				t.Errorf("admin session: %d %s, want 403 forbidden", r.status, r.raw)
			}
			req := httptest.NewRequest(rt.method, rt.path, nil)
			req.Header.Set("Authorization", "Bearer wrong-token")
			if r := e.send(asNobody, req); r.status != 401 {
				t.Errorf("wrong root token: %d, want 401", r.status)
			}
			for _, who := range []string{asRoot, asRootSession} {
				if r := e.do(who, rt.method, rt.path, nil); r.status == 401 || r.status == 403 {
					t.Errorf("%s: %d %s, want access", who, r.status, r.raw)
				}
			}
		})
	}
}

func TestAdminUploadActivateStatusDeleteFlow(t *testing.T) {
	e := newAdminEnv(t)
	up := e.want(e.do(asRoot, "POST", "/api/plugin/task", map[string]any{"source": source(t, "per_task.js")}), 200)
	if up.body["key"] != "acme-video" || up.body["version"] != "1.0.0" || up.body["active"] != true || up.body["enabled"] != true {
		t.Fatalf("upload answer %s", up.raw)
	}
	if r := e.want(e.do(asRoot, "POST", "/api/plugin/task", map[string]any{"source": source(t, "per_task.js")}), 200); r.body["unchanged"] != true {
		t.Fatalf("same source again must be a no-op: %s", r.raw)
	}
	r := e.want(e.do(asRoot, "POST", "/api/plugin/task", map[string]any{"source": source(t, "per_task.js") + "//x"}), 409)
	if errCode(r) != "version_exists" {
		t.Fatalf("immutability: %s", r.raw)
	}
	e.want(e.do(asRoot, "POST", "/api/plugin/task", map[string]any{"source": source(t, "per_task.js", "1.1.0"), "enabled": true}), 200)

	list := e.want(e.do(asRoot, "GET", "/api/plugin/task", nil), 200)
	items := list.body["items"].([]any)
	item := items[0].(map[string]any)
	if list.body["total"] != 1.0 || item["name"] != "Acme Video" || item["active_version"] != "1.0.0" || len(item["versions"].([]any)) != 2 {
		t.Fatalf("list %s", list.raw)
	}
	if item["summary"].(map[string]any)["fetchMode"] != "per_task" {
		t.Fatalf("list summary %s", list.raw)
	}

	detail := e.want(e.do(asRoot, "GET", "/api/plugin/task/acme-video", nil), 200)
	meta := detail.body["meta"].(map[string]any)
	if meta["description"].(map[string]any)["en"] != "Synthetic text to video" || meta["baseUrl"] != "https://api.acme-video.example" {
		t.Fatalf("detail meta must be normalised: %s", detail.raw)
	}
	src := e.want(e.do(asRoot, "GET", "/api/plugin/task/acme-video/source?version=1.1.0", nil), 200)
	if !strings.Contains(src.body["source"].(string), `version: "1.1.0"`) || src.body["sha256"] == "" {
		t.Fatalf("source %s", src.raw[:200])
	}
	e.want(e.do(asRoot, "GET", "/api/plugin/task/acme-video/source?version=9.9.9", nil), 404)

	act := e.want(e.do(asRoot, "POST", "/api/plugin/task/acme-video/activate", map[string]any{"version": "1.1.0"}), 200)
	if act.body["version"] != "1.1.0" || act.body["active"] != true {
		t.Fatalf("activate %s", act.raw)
	}
	e.want(e.do(asRoot, "POST", "/api/plugin/task/acme-video/activate", map[string]any{"version": "3.0.0"}), 404)
	e.want(e.do(asRoot, "POST", "/api/plugin/task/acme-video/activate", map[string]any{"versio": "1.0.0"}), 400)

	st := e.want(e.do(asRoot, "POST", "/api/plugin/task/acme-video/status", map[string]any{"enabled": false}), 200)
	if st.body["enabled"] != false {
		t.Fatalf("status %s", st.raw)
	}
	if _, ok := e.reg.Current().Plugin("acme-video"); ok {
		t.Fatal("a disabled plugin must leave the live generation")
	}
	e.want(e.do(asRoot, "POST", "/api/plugin/task/acme-video/status", map[string]any{}), 400)

	if r := e.want(e.do(asRoot, "DELETE", "/api/plugin/task/acme-video/versions/1.1.0", nil), 409); errCode(r) != "version_active" {
		t.Fatalf("deleting the active version: %s", r.raw)
	}
	e.want(e.do(asRoot, "DELETE", "/api/plugin/task/acme-video/versions/1.0.0", nil), 200)
	e.want(e.do(asRoot, "DELETE", "/api/plugin/task/acme-video", nil), 200)
	e.want(e.do(asRoot, "GET", "/api/plugin/task/acme-video", nil), 404)
	e.want(e.do(asRoot, "DELETE", "/api/plugin/task/acme-video", nil), 404)
}

func TestAdminUploadAsMultipart(t *testing.T) {
	e := newAdminEnv(t)
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("file", "plugin.js")
	io.WriteString(fw, source(t, "batch.js"))
	iw, _ := mw.CreateFormFile("icon", "icon.png")
	iw.Write([]byte("\x89PNG fake"))
	mw.WriteField("enabled", "false")
	mw.Close()
	req := httptest.NewRequest("POST", "/api/plugin/task", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	r := e.want(e.send(asRoot, req), 200)
	if r.body["key"] != "tunebox" || r.body["active"] != true || r.body["enabled"] != false {
		t.Fatalf("multipart upload %s", r.raw)
	}
	versions, _ := e.reg.db.versions(context.Background(), "tunebox")
	if len(versions) != 1 || !versions[0].HasIcon || versions[0].UploadedBy != "root-token" {
		t.Fatalf("stored version %+v", versions)
	}

	var empty bytes.Buffer
	mw = multipart.NewWriter(&empty)
	mw.WriteField("activate", "true")
	mw.Close()
	req = httptest.NewRequest("POST", "/api/plugin/task", &empty)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	e.want(e.send(asRoot, req), 400)
}

func TestAdminUploadListsEveryValidationProblem(t *testing.T) {
	e := newAdminEnv(t)
	r := e.want(e.do(asRoot, "POST", "/api/plugin/task", map[string]any{"source": source(t, "invalid.js")}), 400)
	if errCode(r) != "plugin_invalid" {
		t.Fatalf("code %s", r.raw)
	}
	problems := r.body["error"].(map[string]any)["problems"].([]any)
	if len(problems) < 4 {
		t.Fatalf("want every problem, got %s", r.raw)
	}
	first := problems[0].(map[string]any)
	if first["path"] == "" || first["message"] == "" {
		t.Fatalf("problems need path and message: %s", r.raw)
	}
	e.want(e.do(asRoot, "POST", "/api/plugin/task", map[string]any{"source": source(t, "per_task.js"), "extra": 1}), 400)
	e.want(e.do(asRoot, "POST", "/api/plugin/task", map[string]any{"source": 12}), 400)
}

func TestAdminForceKeepsConflictingPluginHeldBack(t *testing.T) {
	e := newAdminEnv(t)
	e.want(e.do(asRoot, "POST", "/api/plugin/task", map[string]any{"source": source(t, "per_task.js")}), 200)
	r := e.want(e.do(asRoot, "POST", "/api/plugin/task", map[string]any{"source": source(t, "conflicting.js")}), 400)
	if errCode(r) != "plugin_conflict" || len(r.body["error"].(map[string]any)["problems"].([]any)) != 2 {
		t.Fatalf("conflict %s", r.raw)
	}
	r = e.want(e.do(asRoot, "POST", "/api/plugin/task", map[string]any{"source": source(t, "conflicting.js"), "force": true}), 200)
	if r.body["held_back"] != true || r.body["enabled"] != false {
		t.Fatalf("forced upload %s", r.raw)
	}
	status := e.want(e.do(asRoot, "GET", "/api/plugin/task/runtime/status", nil), 200)
	for _, p := range status.body["plugins"].([]any) {
		pm := p.(map[string]any)
		if pm["key"] == "copycat" && (pm["enabled"] != false || pm["held_back"] != true) {
			t.Fatalf("runtime status must show copycat held back: %s", status.raw)
		}
	}
}

func TestAdminDeleteNamesBindingChannels(t *testing.T) {
	e := newAdminEnv(t)
	e.want(e.do(asRoot, "POST", "/api/plugin/task", map[string]any{"source": source(t, "per_task.js")}), 200)
	c := &store.Channel{Name: "video-vendor", Type: ChannelTypeTaskPlugin, BaseURL: "https://x.example", Key: "sk-upstream-secret",
		Models: []string{"acme-v1"}, Groups: []string{"default"}, Status: store.StatusEnabled,
		Settings: map[string]any{"task_plugin_key": "acme-video"}}
	if err := e.st.Channels().Create(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	r := e.want(e.do(asRoot, "DELETE", "/api/plugin/task/acme-video", nil), 409)
	if errCode(r) != "plugin_in_use" || !strings.Contains(r.raw, "video-vendor") || strings.Contains(r.raw, "sk-upstream-secret") {
		t.Fatalf("delete refusal %s", r.raw)
	}
}

func TestAdminDryRun(t *testing.T) {
	e := newAdminEnv(t)
	src := source(t, "per_task.js")
	r := e.want(e.do(asRoot, "POST", "/api/plugin/task/dry-run", map[string]any{"source": src}), 200)
	if r.body["valid"] != true || r.body["key"] != "acme-video" || r.body["result"] != nil {
		t.Fatalf("validate only %s", r.raw)
	}
	r = e.want(e.do(asRoot, "POST", "/api/plugin/task/dry-run", map[string]any{"source": src,
		"hook": "protocols.std_video.render", "args": []any{map[string]any{"echo": "hi"}, map[string]any{"task_id": "task_1"}}}), 200)
	if res, _ := r.body["result"].(map[string]any); res["id"] != "task_1" || res["echo"] != "hi" {
		t.Fatalf("hook result %s", r.raw)
	}
	r = e.want(e.do(asRoot, "POST", "/api/plugin/task/dry-run", map[string]any{"source": src,
		"hook": "parseSubmitResponse", "args": []any{map[string]any{}, map[string]any{}}}), 200)
	if he, _ := r.body["error"].(map[string]any); he["name"] != "TypeError" || he["message"] == "" {
		t.Fatalf("hook error %s", r.raw)
	}
	e.want(e.do(asRoot, "POST", "/api/plugin/task/dry-run", map[string]any{"source": src, "hook": "nope"}), 400)
	if r := e.want(e.do(asRoot, "POST", "/api/plugin/task/dry-run", map[string]any{"source": source(t, "invalid.js")}), 400); errCode(r) != "plugin_invalid" {
		t.Fatalf("invalid dry run %s", r.raw)
	}
	if list, _ := e.reg.db.states(context.Background()); len(list) != 0 {
		t.Fatal("a dry run must not store anything")
	}
}

func TestAdminRuntimeStatus(t *testing.T) {
	e := newAdminEnv(t)
	e.want(e.do(asRoot, "POST", "/api/plugin/task", map[string]any{"source": source(t, "per_task.js")}), 200)
	r := e.want(e.do(asRoot, "GET", "/api/plugin/task/runtime/status", nil), 200)
	if r.body["node"] != "node-a" || r.body["generation"].(float64) < 2 || r.body["revision"] != e.reg.Current().Revision {
		t.Fatalf("status %s", r.raw)
	}
	p := r.body["plugins"].([]any)[0].(map[string]any)
	routes := p["routes"].([]any)
	if p["key"] != "acme-video" || p["version"] != "1.0.0" || p["enabled"] != true || len(routes) != 2 ||
		p["protocols"].([]any)[0] != "std_video" || routes[0].(map[string]any)["path"] != "/acme/v1/videos" {
		t.Fatalf("plugin status %s", r.raw)
	}
}

func TestAdminCallsAreAudited(t *testing.T) {
	e := newAdminEnv(t)
	e.want(e.do(asRoot, "POST", "/api/plugin/task", map[string]any{"source": source(t, "per_task.js")}), 200)
	e.want(e.do(asAdmin, "GET", "/api/plugin/task", nil), 403)
	e.want(e.do(asRootSession, "POST", "/api/plugin/task/acme-video/status", map[string]any{"enabled": false}), 200)
	log, err := e.reg.db.auditLog(context.Background(), 10)
	if err != nil || len(log) != 3 {
		t.Fatalf("audit log %+v, %v; want 3 rows", log, err)
	}
	want := []AuditEntry{
		{Actor: "root-user", Action: "status", Key: "acme-video", Outcome: "ok", Detail: "disable"},
		{Actor: "admin-user", Action: "list", Outcome: "forbidden"},
		{Actor: "root-token", Action: "upload", Key: "acme-video", Version: "1.0.0", Outcome: "ok"},
	}
	for i, w := range want {
		if log[i] != w {
			t.Errorf("audit row %d = %+v, want %+v", i, log[i], w)
		}
	}
}

// TestAdminAnswersNameInferredResponsesModes checks that the dry run and the
// upload say which std_responses modes were inferred for a bare
// openai_responses claim, and that the stored meta shows the object form.
func TestAdminAnswersNameInferredResponsesModes(t *testing.T) {
	e := newAdminEnv(t)
	src := source(t, "legacy_responses.js")
	wantInferred := func(what string, r resp) {
		t.Helper()
		list, _ := r.body["inferred"].([]any)
		if len(list) != 1 {
			t.Fatalf("%s: want one inferred entry: %s", what, r.raw)
		}
		inf := list[0].(map[string]any)
		if inf["path"] != "meta.protocols[0]" || inf["protocol"] != "std_responses" || fmt.Sprint(inf["supports"]) != "[sync background]" {
			t.Fatalf("%s: inferred entry %v", what, inf)
		}
	}
	wantInferred("dry run", e.want(e.do(asRoot, "POST", "/api/plugin/task/dry-run", map[string]any{"source": src}), 200))
	wantInferred("upload", e.want(e.do(asRoot, "POST", "/api/plugin/task", map[string]any{"source": src}), 200))
	wantInferred("repeated upload", e.want(e.do(asRoot, "POST", "/api/plugin/task", map[string]any{"source": src}), 200))

	detail := e.want(e.do(asRoot, "GET", "/api/plugin/task/legacy-resp", nil), 200)
	claims := detail.body["meta"].(map[string]any)["protocols"].([]any)
	claim, _ := claims[0].(map[string]any)
	if len(claims) != 1 || claim["name"] != "std_responses" || fmt.Sprint(claim["supports"]) != "[sync background]" {
		t.Fatalf("normalised meta must show the object form: %v", claims)
	}
}
