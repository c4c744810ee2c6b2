package app_test

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"strings"
	"testing"
)

// The fake vendors below speak each published plugin's upstream wire as
// the plugin's own hooks build and parse it: the submit path, the
// credentials, the status query and a successful answer.

func wantBearer(token string) func(*http.Request) string {
	return wantHeader("Authorization", "Bearer "+token)
}

func wantHeader(name, value string) func(*http.Request) string {
	return func(r *http.Request) string {
		if got := r.Header.Get(name); got != value {
			return name + " is " + quoteOrEmpty(got) + ", want " + value
		}
		return ""
	}
}

func quoteOrEmpty(s string) string {
	if s == "" {
		return "empty"
	}
	return `"` + s + `"`
}

// wantJWTBearer checks a Bearer token that is a signed JWT whose issuer is
// the access key (kling signs one from "accessKey|secretKey").
func wantJWTBearer(issuer string) func(*http.Request) string {
	return func(r *http.Request) string {
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		parts := strings.Split(tok, ".")
		if !ok || len(parts) != 3 {
			return "Authorization is not a Bearer JWT"
		}
		raw, err := base64.RawURLEncoding.DecodeString(parts[1])
		var claims struct {
			Iss string `json:"iss"`
		}
		if err != nil || json.Unmarshal(raw, &claims) != nil || claims.Iss != issuer {
			return "the JWT's issuer is not " + issuer
		}
		return ""
	}
}

// wantVolcSignature checks a Volcengine V4 signature made with accessKey.
func wantVolcSignature(accessKey string) func(*http.Request) string {
	return func(r *http.Request) string {
		auth := r.Header.Get("Authorization")
		if !strings.HasPrefix(auth, "HMAC-SHA256 Credential="+accessKey+"/") || !strings.Contains(auth, "Signature=") {
			return "Authorization is not a Volcengine signature with access key " + accessKey + ": " + quoteOrEmpty(auth)
		}
		if r.Header.Get("X-Date") == "" {
			return "X-Date is missing from a signed request"
		}
		return ""
	}
}

const videoURL = "https://cdn.example/video.mp4"

func marketVendors(t *testing.T) map[string]*marketVendor {
	key := func(name string) string { return name + "-" + secretMarker }
	return map[string]*marketVendor{
		"ali": {model: "wan2.7-t2v", key: key("ali"), auth: wantBearer(key("ali")),
			submitPath:  "/api/v1/services/aigc/video-generation/video-synthesis",
			submitReply: `{"request_id":"r1","output":{"task_id":"ali-1","task_status":"PENDING"}}`,
			queryMethod: "GET", queryPath: "/api/v1/tasks/ali-1",
			queryReply: `{"request_id":"r2","output":{"task_id":"ali-1","task_status":"SUCCEEDED","video_url":"` + videoURL + `"}}`},
		"doubao": {model: "doubao-seedance-1-0-pro-250528", key: key("doubao"), auth: wantBearer(key("doubao")),
			submitPath:  "/api/v3/contents/generations/tasks",
			submitReply: `{"id":"cgt-1"}`,
			queryMethod: "GET", queryPath: "/api/v3/contents/generations/tasks/cgt-1",
			queryReply: `{"id":"cgt-1","status":"succeeded","content":{"video_url":"` + videoURL + `"},"usage":{"completion_tokens":108000,"total_tokens":108000}}`},
		"gemini": {model: "veo-3.0-generate-001", key: key("gemini"), auth: wantHeader("x-goog-api-key", key("gemini")),
			submitPath:  "/v1beta/models/veo-3.0-generate-001:predictLongRunning",
			submitReply: `{"name":"models/veo-3.0-generate-001/operations/op-1"}`,
			queryMethod: "GET", queryPath: "/v1beta/models/veo-3.0-generate-001/operations/op-1",
			queryReply: `{"name":"models/veo-3.0-generate-001/operations/op-1","done":true,` +
				`"response":{"generateVideoResponse":{"generatedVideos":[{"video":{"uri":"` + videoURL + `"}}]}}}`},
		"hailuo": {model: "T2V-01", key: key("hailuo"), auth: wantBearer(key("hailuo")),
			submitPath:  "/v1/video_generation",
			submitReply: `{"task_id":"h-1","base_resp":{"status_code":0,"status_msg":"success"}}`,
			queryMethod: "GET", queryPath: "/v1/query/video_generation?task_id=h-1",
			queryReply: `{"task_id":"h-1","status":"Success","file_id":"file-1","base_resp":{"status_code":0,"status_msg":"success"}}`},
		"jimeng": {model: "jimeng_vgfm_t2v_l20", key: "AKJIMENG|" + key("jimeng"), auth: wantVolcSignature("AKJIMENG"),
			submitPath:  "/?Action=CVSync2AsyncSubmitTask&Version=2022-08-31",
			submitReply: `{"code":10000,"message":"Success","data":{"task_id":"j-1"}}`,
			queryMethod: "POST", queryPath: "/?Action=CVSync2AsyncGetResult&Version=2022-08-31",
			queryReply: `{"code":10000,"message":"Success","data":{"status":"done","video_url":"` + videoURL + `"}}`},
		"kling": {model: "kling-v1", key: "AKKLING|" + key("kling"), auth: wantJWTBearer("AKKLING"),
			submitPath:  "/v1/videos/text2video",
			submitReply: `{"code":0,"message":"SUCCEED","data":{"task_id":"k-1","task_status":"submitted"}}`,
			queryMethod: "GET", queryPath: "/v1/videos/text2video/k-1",
			queryReply: `{"code":0,"data":{"task_id":"k-1","task_status":"succeed","task_result":{"videos":[{"url":"` + videoURL + `"}]}}}`},
		"sora": {model: "sora-2", key: key("sora"), auth: wantBearer(key("sora")),
			submitPath:  "/v1/videos",
			submitReply: `{"id":"video_1","object":"video","status":"queued"}`,
			queryMethod: "GET", queryPath: "/v1/videos/video_1",
			queryReply: `{"id":"video_1","object":"video","status":"completed","progress":100}`},
		"sunoapi": {model: "suno_music", key: key("suno"), auth: wantBearer(key("suno")),
			submitPath:  "/suno/submit/MUSIC",
			submitReply: `{"code":"success","message":"","data":"suno-1"}`,
			queryMethod: "POST", queryPath: "/suno/fetch",
			queryReply: `{"code":"success","data":[{"task_id":"suno-1","action":"MUSIC","status":"SUCCESS","progress":"100%",` +
				`"data":[{"id":"song-1","title":"Fox","text":"la la","audio_url":"https://cdn.example/song.mp3"}]}]}`},
		"vertex": vertexVendor(t),
		"vidu": {model: "viduq1", key: key("vidu"), auth: wantHeader("Authorization", "Token "+key("vidu")),
			submitPath:  "/ent/v2/text2video",
			submitReply: `{"task_id":"v-1","state":"created"}`,
			queryMethod: "GET", queryPath: "/ent/v2/tasks/v-1/creations",
			queryReply: `{"id":"v-1","state":"success","creations":[{"id":"c1","url":"` + videoURL + `"}]}`},
	}
}

// vertexVendor also serves the OAuth token endpoint the channel's
// service-account key names, and expects the exchanged token on every call.
func vertexVendor(t *testing.T) *marketVendor {
	const token = "ya29.vertex-token"
	op := "projects/proj-1/locations/us-central1/publishers/google/models/veo-3.1-generate-preview/operations/op-9"
	pk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(pk)
	if err != nil {
		t.Fatal(err)
	}
	pemKey := string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	return &marketVendor{
		model: "veo-3.1-generate-preview",
		keyFor: func(baseURL string) string {
			b, _ := json.Marshal(map[string]string{"type": "service_account", "project_id": "proj-1",
				"client_email": "svc@proj-1.iam.example", "private_key": pemKey, "token_uri": baseURL + "/token",
				"secret_marker": secretMarker})
			return string(b)
		},
		auth:        wantBearer(token),
		submitPath:  "/v1/projects/proj-1/locations/global/publishers/google/models/veo-3.1-generate-preview:predictLongRunning",
		submitReply: `{"name":"` + op + `"}`,
		queryMethod: "POST",
		queryPath:   "/v1/projects/proj-1/locations/us-central1/publishers/google/models/veo-3.1-generate-preview:fetchPredictOperation",
		queryReply:  `{"name":"` + op + `","done":true,"response":{"videos":[{"bytesBase64Encoded":"AAAA","mimeType":"video/mp4"}]}}`,
		extra: func(w http.ResponseWriter, r *http.Request) bool {
			if r.URL.Path != "/token" {
				return false
			}
			if err := r.ParseForm(); err != nil || r.PostForm.Get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer" ||
				strings.Count(r.PostForm.Get("assertion"), ".") != 2 {
				w.WriteHeader(http.StatusBadRequest)
				return true
			}
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"access_token":"` + token + `","expires_in":3600,"token_type":"Bearer"}`))
			return true
		},
	}
}
