package jsrt

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/grafana/sobek"
)

// volcRequest is the input of utils.volcSignV4. Published plugins spell the
// keys in Go style (Method, URL, AccessKey, ...); lower camel case is
// accepted too, so keys are matched case-insensitively.
type volcRequest struct {
	Method, URL, Body    string
	Headers              map[string]string
	AccessKey, SecretKey string
	Region, Service      string
	Timestamp            int64 // Unix seconds; zero means now
}

func utilVolcSignV4(rt *sobek.Runtime, env *hostEnv, call sobek.FunctionCall) sobek.Value {
	req, err := parseVolcRequest(objectArg(rt, call, 0, "volcSignV4"))
	if err != nil {
		throwType(rt, "utils.volcSignV4: %s", err)
	}
	headers, err := signVolcV4(req, env.now())
	if err != nil {
		throwType(rt, "utils.volcSignV4: %s", err)
	}
	out := rt.NewObject()
	for _, k := range sortedKeys(headers) {
		if err := out.Set(k, headers[k]); err != nil {
			throwType(rt, "utils.volcSignV4: %s", err)
		}
	}
	return out
}

func parseVolcRequest(m map[string]any) (volcRequest, error) {
	var req volcRequest
	for k, v := range m {
		var err error
		switch strings.ToLower(k) {
		case "method":
			req.Method, err = volcString(k, v)
		case "url":
			req.URL, err = volcString(k, v)
		case "body":
			req.Body, err = volcString(k, v)
		case "accesskey":
			req.AccessKey, err = volcString(k, v)
		case "secretkey":
			req.SecretKey, err = volcString(k, v)
		case "region":
			req.Region, err = volcString(k, v)
		case "service":
			req.Service, err = volcString(k, v)
		case "timestamp":
			ts, ok := v.(int64)
			if !ok && v != nil {
				err = errors.New("timestamp must be an integer number of seconds")
			}
			req.Timestamp = ts
		case "headers":
			req.Headers, err = volcHeaders(v)
		}
		if err != nil {
			return volcRequest{}, err
		}
	}
	return req, nil
}

func volcString(key string, v any) (string, error) {
	switch x := v.(type) {
	case nil:
		return "", nil
	case string:
		return x, nil
	}
	return "", fmt.Errorf("%s must be a string", key)
}

func volcHeaders(v any) (map[string]string, error) {
	if v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("headers must be an object of strings")
	}
	out := make(map[string]string, len(m))
	for k, val := range m {
		switch x := val.(type) {
		case string:
			out[k] = x
		case int64, float64, bool:
			out[k] = fmt.Sprint(x)
		default:
			return nil, fmt.Errorf("header %q must be a string", k)
		}
	}
	return out, nil
}

// signVolcV4 signs a request for the Volcengine OpenAPI (signature V4: an
// HMAC-SHA256 chain over a canonical request, credential scope
// date/region/service/request) and returns the headers to add.
func signVolcV4(req volcRequest, now time.Time) (map[string]string, error) {
	u, err := url.Parse(req.URL)
	if err != nil || u.Host == "" {
		return nil, errors.New("url must be an absolute URL")
	}
	if req.AccessKey == "" || req.SecretKey == "" {
		return nil, errors.New("accessKey and secretKey are required")
	}
	region, service := req.Region, req.Service
	if region == "" {
		region = "cn-north-1"
	}
	if service == "" {
		service = "cv"
	}
	if req.Timestamp != 0 {
		now = time.Unix(req.Timestamp, 0)
	}
	now = now.UTC()
	xDate := now.Format("20060102T150405Z")
	shortDate := now.Format("20060102")
	bodyHash := sha256.Sum256([]byte(req.Body))
	bodyHex := hex.EncodeToString(bodyHash[:])

	headers := map[string]string{}
	for name, value := range req.Headers {
		headers[strings.ToLower(strings.TrimSpace(name))] = strings.TrimSpace(value)
	}
	headers["host"] = u.Host
	headers["x-date"] = xDate
	headers["x-content-sha256"] = bodyHex
	canonical, signed := volcCanonicalRequest(req.Method, u, headers, bodyHex)

	scope := shortDate + "/" + region + "/" + service + "/request"
	canonicalHash := sha256.Sum256([]byte(canonical))
	stringToSign := "HMAC-SHA256\n" + xDate + "\n" + scope + "\n" + hex.EncodeToString(canonicalHash[:])
	key := hmacSHA256([]byte(shortDate), []byte(req.SecretKey))
	for _, part := range []string{region, service, "request"} {
		key = hmacSHA256([]byte(part), key)
	}
	signature := hex.EncodeToString(hmacSHA256([]byte(stringToSign), key))
	return map[string]string{
		"Authorization":    "HMAC-SHA256 Credential=" + req.AccessKey + "/" + scope + ", SignedHeaders=" + signed + ", Signature=" + signature,
		"X-Date":           xDate,
		"X-Content-Sha256": bodyHex,
	}, nil
}

// volcCanonicalRequest builds the canonical request and the signed-header
// list. The query is sorted and percent-encoded with %20 for spaces, which is
// what the Volcengine gateway recomputes.
func volcCanonicalRequest(method string, u *url.URL, headers map[string]string, bodyHex string) (string, string) {
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	query := strings.ReplaceAll(u.Query().Encode(), "+", "%20")
	names := sortedKeys(headers)
	var canonHeaders strings.Builder
	for _, name := range names {
		canonHeaders.WriteString(name + ":" + headers[name] + "\n")
	}
	signed := strings.Join(slices.Clip(names), ";")
	canonical := strings.Join([]string{strings.ToUpper(method), path, query, canonHeaders.String(), signed, bodyHex}, "\n")
	return canonical, signed
}
