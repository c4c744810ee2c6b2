package batch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/tidwall/gjson"

	"github.com/turnpike-gw/turnpike/internal/admission"
	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/billing"
	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol"
	"github.com/turnpike-gw/turnpike/internal/routing"
	"github.com/turnpike-gw/turnpike/internal/tokenize"
)

// endpoints are the endpoints an OpenAI-form batch may call.
var endpoints = map[string]bool{"/v1/chat/completions": true, "/v1/embeddings": true, "/v1/responses": true}

// lineError is one entry of a batch's errors list (OpenAI's shape).
type lineError struct {
	Code    string  `json:"code"`
	Message string  `json:"message"`
	Param   *string `json:"param"`
	Line    int     `json:"line"`
}

// maxLineErrors bounds the errors list of a bad file: the first ones tell
// the client what is wrong, a million of them tell it nothing more.
const maxLineErrors = 1000

// plan is what validating a file found: how many lines, and per model the
// lines and the estimate they reserve at the batch price.
type plan struct {
	lines  int
	models map[string]*modelPlan
	errs   []lineError
	// What was validated, so the estimate can be recounted exactly.
	principal        *auth.Principal
	fileID, endpoint string
	provider, exact  bool
}

type modelPlan struct {
	lines    int
	estimate int64
}

// sortedModels is the plan's models in a stable order (holds are taken
// and settled in it).
func (p *plan) sortedModels() []string {
	out := make([]string, 0, len(p.models))
	for m := range p.models {
		out = append(out, m)
	}
	sort.Strings(out)
	return out
}

// firstModel is the model a create counts against for the rate limits:
// the create is one request, whatever models its lines name.
func (p *plan) firstModel() string {
	if ms := p.sortedModels(); len(ms) > 0 {
		return ms[0]
	}
	return ""
}

// validate checks every line of the input file before anything runs: JSON,
// a unique custom_id, method POST, url equal to endpoint, a model the key
// may use, that is routed for its group and has a price; and it sizes each
// line's reservation at the batch price. The estimate counts a line's body
// bytes as its prompt tokens (a token is at least a byte) unless exact,
// when the tokenizer counts them: that costs seconds on a large file, so it
// is done only when the cheap bound does not fit (see start).
func (s *Service) validate(ctx context.Context, p *auth.Principal, fileID, endpoint string, provider, exact bool) (*plan, error) {
	pl := &plan{models: map[string]*modelPlan{}, principal: p, fileID: fileID, endpoint: endpoint, provider: provider, exact: exact}
	seen := map[string]int{}
	table := s.Router.Table()
	prices := map[string]*billing.Price{}
	add := func(n int, code, msg string, param string) {
		if len(pl.errs) >= maxLineErrors {
			return
		}
		e := lineError{Code: code, Message: msg, Line: n}
		if param != "" {
			e.Param = &param
		}
		pl.errs = append(pl.errs, e)
	}
	err := s.eachLine(ctx, fileID, func(n int, line []byte) error {
		pl.lines++
		valid, dup := protocol.CheckMembers(line)
		if !valid || !gjson.ParseBytes(line).IsObject() {
			add(n, "invalid_json_line", "this line is not a JSON object", "")
			return nil
		}
		if dup != nil {
			// The gateway reads the first of two members and the upstream
			// the last: the line would run what was never checked.
			add(n, dup.Code, dup.Message, dup.Param)
			return nil
		}
		l := gjson.ParseBytes(line)
		id := l.Get("custom_id")
		switch {
		case id.Type != gjson.String || id.String() == "":
			add(n, "missing_custom_id", "every line needs a custom_id string", "custom_id")
		case seen[id.String()] > 0:
			add(n, "duplicate_custom_id", fmt.Sprintf("custom_id %q is also used on line %d", id.String(), seen[id.String()]), "custom_id")
		default:
			seen[id.String()] = n
		}
		if m := l.Get("method").String(); m != "POST" {
			add(n, "invalid_method", "method must be POST", "method")
		}
		if u := l.Get("url").String(); u != endpoint {
			add(n, "invalid_url", fmt.Sprintf("url %q is not the batch's endpoint %s", u, endpoint), "url")
		}
		body := l.Get("body")
		if !body.IsObject() {
			add(n, "invalid_request", "body must be a JSON object", "body")
			return nil
		}
		if body.Get("stream").Bool() || body.Get("background").Bool() {
			add(n, "invalid_request", "a batch line cannot stream or run in the background", "body")
		}
		model := body.Get("model").String()
		if model == "" {
			add(n, "missing_required_parameter", "body.model is required", "body.model")
			return nil
		}
		price, ok := prices[model]
		if !ok {
			price, err := s.priceFor(table, p, model, provider)
			if err != nil {
				e := ir.As(err)
				add(n, e.Code, e.Message, "body.model")
			}
			prices[model] = price
		}
		price = prices[model]
		if price == nil {
			return nil
		}
		q, err := s.lineEstimate(price, p.Group, model, endpoint, body, exact)
		if err != nil {
			add(n, "invalid_request", "the line cannot be priced: "+ir.As(err).Message, "body")
			return nil
		}
		mp := pl.models[model]
		if mp == nil {
			mp = &modelPlan{}
			pl.models[model] = mp
		}
		mp.lines++
		mp.estimate += q
		return nil
	})
	if errors.Is(err, errLineTooLong) {
		add(pl.lines+1, "line_too_long", "a line is longer than the gateway accepts", "")
		return pl, nil
	}
	if err != nil {
		return nil, err
	}
	if pl.lines == 0 {
		add(0, "empty_file", "the input file has no lines", "")
	}
	return pl, nil
}

// priceFor is admission's check of a model for p (allowed, routed, priced)
// and its batch price.
func (s *Service) priceFor(t *routing.Table, p *auth.Principal, model string, provider bool) (*billing.Price, error) {
	price, err := s.gate().Price(t, p, model)
	if err != nil {
		return nil, err
	}
	return billing.BatchPrice(price, provider), nil
}

func (s *Service) gate() admission.Gate {
	return admission.Gate{Billing: s.Billing, Limits: s.Limits, Plans: s.Plans}
}

// lineEstimate is a line's reservation: its body as prompt (the JSON
// around the text makes it an upper bound), in bytes or counted, plus the
// most output it may produce, at the batch price.
func (s *Service) lineEstimate(price *billing.Price, group, model, endpoint string, body gjson.Result, exact bool) (int64, error) {
	u := ir.Usage{InputTokens: len(body.Raw)}
	if exact {
		u.InputTokens = tokenize.Count(model, body.Raw)
	}
	if endpoint != "/v1/embeddings" {
		u.OutputTokens = s.Options.DefaultCompletionTokens
		for _, f := range outputFields[endpoint] {
			if v := body.Get(f); v.Exists() && v.Int() > 0 {
				if v.Int() > 1<<31-1 {
					return 0, ir.BadRequest("invalid_value", "%s is too large", f)
				}
				u.OutputTokens = int(v.Int())
				break
			}
		}
	}
	return s.gate().HoldQuota(price, u, price.CallCost(1), group)
}

func marshalErrors(errs []lineError) json.RawMessage {
	if len(errs) == 0 {
		return nil
	}
	b, _ := json.Marshal(map[string]any{"object": "list", "data": errs})
	return b
}
