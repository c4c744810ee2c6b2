package relay

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// altModels lists models the alternate-native way and returns the status
// and the decoded answer.
func altModels(t *testing.T, e *env, query url.Values) (int, map[string]any) {
	t.Helper()
	query.Set("key", testKey)
	resp, err := http.Get(e.srv.URL + "/v1beta/models?" + query.Encode())
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, readJSON(t, resp)
}

func TestAlternateModelListPagesThroughEveryModel(t *testing.T) {
	e := newEnv(t)
	e.channel("c", newFake(t, &fakeOpenAI{}).URL, func(c *store.Channel) { c.Models = []string{"m1", "m2", "m3", "m4", "m5"} })
	for _, size := range []int{1, 2, 5, 7} {
		t.Run(fmt.Sprintf("pageSize %d", size), func(t *testing.T) {
			var names []string
			token, pages := "", 0
			for {
				q := url.Values{"pageSize": {fmt.Sprint(size)}}
				if token != "" {
					q.Set("pageToken", token)
				}
				status, body := altModels(t, e, q)
				if status != 200 {
					t.Fatalf("page %d: %d %v", pages, status, body)
				}
				next, present := body["nextPageToken"].(string)
				if !present {
					t.Fatalf("nextPageToken must always be a string: %v", body)
				}
				models := body["models"].([]any)
				if len(models) > size {
					t.Fatalf("page of %d models for pageSize %d", len(models), size)
				}
				for _, m := range models {
					names = append(names, m.(map[string]any)["name"].(string))
				}
				pages++
				if next == "" {
					break
				}
				token = next
			}
			want := "models/m1 models/m2 models/m3 models/m4 models/m5"
			if got := strings.Join(names, " "); got != want {
				t.Errorf("models = %s, want %s", got, want)
			}
			if wantPages := (5 + size - 1) / size; pages != wantPages {
				t.Errorf("%d pages, want %d", pages, wantPages)
			}
		})
	}
}

func TestAlternateModelListRefusesBadPaging(t *testing.T) {
	e := newEnv(t)
	e.channel("c", newFake(t, &fakeOpenAI{}).URL, func(c *store.Channel) { c.Models = []string{"m1"} })
	tests := []struct {
		name  string
		query url.Values
		field string
	}{
		{"pageSize that is not a number", url.Values{"pageSize": {"ten"}}, "pageSize"},
		{"negative pageSize", url.Values{"pageSize": {"-1"}}, "pageSize"},
		{"fractional pageSize", url.Values{"pageSize": {"1.5"}}, "pageSize"},
		{"pageToken this gateway did not issue", url.Values{"pageToken": {"not-a-token"}}, "pageToken"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := altModels(t, e, tt.query)
			errObj, _ := body["error"].(map[string]any)
			msg, _ := errObj["message"].(string)
			if status != 400 || errObj["code"] != float64(400) || errObj["status"] != "INVALID_ARGUMENT" || !strings.Contains(msg, tt.field) {
				t.Fatalf("want a 400 in the alternate-native dialect naming %s; got %d %v", tt.field, status, body)
			}
		})
	}
}

func TestAlternateClientAskingForSeveralCandidatesIsToldItsOwnField(t *testing.T) {
	e := newEnv(t)
	fake := &fakeOpenAI{}
	e.channel("c", newFake(t, fake).URL, func(c *store.Channel) { c.Models = []string{"m"} })
	e.price("m", store.ModelPrice{InputPerMTok: 1, OutputPerMTok: 1})
	body := `{"contents":[{"parts":[{"text":"hi"}]}],"generationConfig":{"candidateCount":2}}`
	resp, err := http.Post(e.srv.URL+"/v1beta/models/m:generateContent?key="+testKey, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	got := readJSON(t, resp)
	errObj, _ := got["error"].(map[string]any)
	msg, _ := errObj["message"].(string)
	if resp.StatusCode != 400 || !strings.Contains(msg, "generationConfig.candidateCount") || strings.HasPrefix(msg, "n ") {
		t.Fatalf("want a 400 naming generationConfig.candidateCount; got %d %v", resp.StatusCode, got)
	}
	fake.mu.Lock()
	defer fake.mu.Unlock()
	if len(fake.bodies) != 0 {
		t.Errorf("the refused request reached the upstream %d time(s)", len(fake.bodies))
	}
}

func TestAnEmptyPageTokenAfterTheLastPageEndsTheListWithoutAToken(t *testing.T) {
	e := newEnv(t)
	e.channel("c", newFake(t, &fakeOpenAI{}).URL, func(c *store.Channel) { c.Models = []string{"a", "b"} })
	req, _ := http.NewRequest("GET", e.srv.URL+"/v1beta/models?pageSize=1&pageToken=", nil)
	req.Header.Set("x-goog-api-key", testKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body := readJSON(t, resp)
	if _, has := body["nextPageToken"]; resp.StatusCode != 200 || has || len(body["models"].([]any)) != 0 {
		t.Fatalf("status %d body %v, want an empty page without nextPageToken", resp.StatusCode, body)
	}
}

func TestTheOfficialGoogleClientsLastPageHasNoTokenAsGooglesAPIAnswers(t *testing.T) {
	e := newEnv(t)
	e.channel("c", newFake(t, &fakeOpenAI{}).URL, func(c *store.Channel) { c.Models = []string{"a", "b"} })
	req, _ := http.NewRequest("GET", e.srv.URL+"/v1beta/models?pageSize=5", nil)
	req.Header.Set("x-goog-api-key", testKey)
	req.Header.Set("x-goog-api-client", "google-genai-sdk/2.32.0 gl-node/v20.20.2")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body := readJSON(t, resp)
	if _, has := body["nextPageToken"]; resp.StatusCode != 200 || has || len(body["models"].([]any)) != 2 {
		t.Fatalf("status %d body %v, want both models and no nextPageToken", resp.StatusCode, body)
	}
}
