package bedrock

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/turnpike-gw/turnpike/internal/upstream"
)

// ListModels asks the control plane (GET /foundation-models, signed for
// the same service) for the foundation models with text output: the
// models Converse can chat with.
func (a Adapter) ListModels(ctx context.Context, t upstream.Target) ([]string, error) {
	region := t.Setting("region")
	if !regionPattern.MatchString(region) {
		return nil, errNoRegion
	}
	u := ControlBase(t, region) + t.PathPrefix("") + "/foundation-models?byOutputModality=TEXT"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, http.NoBody)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	upstream.ApplyHeaders(req, t)
	if err := a.authorize(ctx, req, t, region, nil); err != nil {
		return nil, err
	}
	body, err := upstream.Fetch(t, req)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, v := range gjson.GetBytes(body, "modelSummaries.#.modelId").Array() {
		if id := v.String(); id != "" {
			out = append(out, id)
		}
	}
	return out, nil
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
