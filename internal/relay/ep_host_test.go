package relay

import (
	"bytes"
	"io"
	"mime/multipart"
	"net/http"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// fakeImageHost claims one model for std_image and records what it was handed.
type fakeImageHost struct {
	model    string
	gotModel string
	gotBody  []byte
}

func (h *fakeImageHost) ServeProtocol(w http.ResponseWriter, r *http.Request, protocol, model string, body []byte) bool {
	if protocol != "std_image" || model != h.model {
		return false
	}
	h.gotModel, h.gotBody = model, body
	writeRaw(w, http.StatusOK, []byte(`{"created":1,"data":[{"url":"https://plugin/img.png"}]}`))
	return true
}

func (h *fakeImageHost) ServeResponse(http.ResponseWriter, *http.Request, string) bool { return false }

func TestImageRequestsForPluginModelsGoToThePluginHost(t *testing.T) {
	e := newEnv(t)
	e.price("img-1", store.ModelPrice{PerCall: 0.04})
	f := &fakeEndpoints{}
	e.endpointChannel("main", f, 1, "img-1")
	hosts := &fakeImageHost{model: "plugin-img"}
	e.relay.Hosts = hosts

	body := `{"model":"plugin-img","prompt":"a cat"}`
	resp := e.post("/v1/images/generations", testKey, body)
	got := readJSON(t, resp)
	if resp.StatusCode != 200 || gjsonOf(got, "data.0.url") != "https://plugin/img.png" || string(hosts.gotBody) != body {
		t.Fatalf("status %d body %v; host got %q", resp.StatusCode, got, hosts.gotBody)
	}

	var form bytes.Buffer
	mw := multipart.NewWriter(&form)
	mw.WriteField("model", "plugin-img")
	mw.WriteField("prompt", "add a hat")
	fw, _ := mw.CreateFormFile("image", "cat.png")
	fw.Write([]byte("PNGDATA"))
	mw.Close()
	req, _ := http.NewRequest("POST", e.srv.URL+"/v1/images/edits", bytes.NewReader(form.Bytes()))
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+testKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !bytes.Equal(hosts.gotBody, form.Bytes()) {
		t.Fatalf("multipart edit: status %d, host got %d bytes of %d", resp.StatusCode, len(hosts.gotBody), form.Len())
	}

	// A model no plugin claims takes the ordinary path, body intact.
	resp = e.post("/v1/images/generations", testKey, `{"model":"img-1","prompt":"a dog"}`)
	readJSON(t, resp)
	if resp.StatusCode != 200 || f.last(t).json("prompt").String() != "a dog" {
		t.Fatalf("unclaimed model: status %d, upstream got %s", resp.StatusCode, f.last(t).raw)
	}
}
