package bedrock

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/turnpike-gw/turnpike/internal/upstream"
)

// ListModels asks the control plane (signed for the same service) for
// the foundation models with text output (GET /foundation-models), the
// models Converse can chat with, and then for the system-defined
// inference profiles (GET /inference-profiles, every page), the ids newer
// models are only served under (us.anthropic.claude-…). An account that
// may not list profiles still gets its models.
func (a Adapter) ListModels(ctx context.Context, t upstream.Target) ([]string, error) {
	region := t.Setting("region")
	if !regionPattern.MatchString(region) {
		return nil, errNoRegion
	}
	body, err := a.control(ctx, t, region, "/foundation-models?byOutputModality=TEXT")
	if err != nil {
		return nil, err
	}
	out := ids(body, "modelSummaries.#.modelId", nil)
	token := ""
	for page := 0; page < maxProfilePages; page++ {
		q := "/inference-profiles?maxResults=1000&typeEquals=SYSTEM_DEFINED"
		if token != "" {
			q += "&nextToken=" + url.QueryEscape(token)
		}
		body, err := a.control(ctx, t, region, q)
		if err != nil {
			break
		}
		out = ids(body, "inferenceProfileSummaries.#.inferenceProfileId", out)
		if token = gjson.GetBytes(body, "nextToken").String(); token == "" {
			break
		}
	}
	return out, nil
}

// maxProfilePages bounds the inference-profile pages read.
const maxProfilePages = 20

func ids(body []byte, path string, out []string) []string {
	for _, v := range gjson.GetBytes(body, path).Array() {
		if id := v.String(); id != "" {
			out = append(out, id)
		}
	}
	return out
}

// control sends a signed GET to the control plane and returns its 2xx body.
func (a Adapter) control(ctx context.Context, t upstream.Target, region, pathAndQuery string) ([]byte, error) {
	u := ControlBase(t, region) + t.PathPrefix("") + pathAndQuery
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, http.NoBody)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	upstream.ApplyHeaders(req, t)
	if err := a.authorize(ctx, req, t, region, nil); err != nil {
		return nil, err
	}
	return upstream.Fetch(t, req)
}

// ControlBase is the control plane's origin. Without base_url it is the
// region's public endpoint. With one, a host with a "bedrock-runtime"
// label (a VPC or FIPS endpoint of the runtime) names the control plane
// with "bedrock" in its place; any other address (a proxy) is asked as it
// is.
func ControlBase(t upstream.Target, region string) string {
	base := t.Base("")
	if base == "" {
		return "https://bedrock." + region + ".amazonaws.com"
	}
	u, err := url.Parse(base)
	if err != nil {
		return base
	}
	labels := strings.Split(u.Host, ".")
	for i, l := range labels {
		if l == "bedrock-runtime" || strings.HasPrefix(l, "bedrock-runtime-") {
			labels[i] = "bedrock" + strings.TrimPrefix(l, "bedrock-runtime")
			u.Host = strings.Join(labels, ".")
			return u.String()
		}
	}
	return base
}
