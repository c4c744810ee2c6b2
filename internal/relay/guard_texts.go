package relay

import (
	"strconv"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/turnpike-gw/turnpike/internal/guardrail"
	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/tokenize"
)

// guardTexts is all a surface hands the one guard hook: where its texts
// are (pointers the guardrails rewrite in place when they redact), and how
// a redaction is written back to what goes upstream or to the client.
// Every surface that sends user text upstream declares its texts this way;
// none runs guardrails itself.
type guardTexts struct {
	texts []*string
	// tokens counts the prompt for max_input_tokens (nil: not counted).
	tokens func() int
	// messages is the conversation as a plugin's ctx.messages (nil: none).
	messages func() any
	// commit writes a redaction back; nil when texts point into what is
	// sent already (the decoded chat request).
	commit func() error
}

// checkRequest is the request stage of every surface: it runs before the
// call is admitted, so a blocked request reserves nothing, reaches no
// upstream and is recorded as an error row of no cost. gather runs only
// when a guardrail checks this call's requests, so a gateway without
// guardrails pays nothing per call.
func (c *callCore) checkRequest(gather func() guardTexts) (redacted bool, err error) {
	set := c.rl.guardSet()
	call := c.guardCall()
	if !set.Applies(call, guardrail.StageRequest) {
		return false, nil
	}
	gt := gather()
	v := set.Check(c.r.Context(), guardrail.Input{Call: call, Stage: guardrail.StageRequest,
		Texts: gt.texts, Tokens: gt.tokens, Messages: gt.messages})
	c.guards = append(c.guards, v.Records...)
	if v.Blocked != nil {
		e := blockedError(v.Blocked)
		c.recordRefused(e)
		return false, e
	}
	if v.Redacted && gt.commit != nil {
		if err := gt.commit(); err != nil {
			return false, err
		}
	}
	return v.Redacted, nil
}

// checkWhole is the response stage of an answer checked whole (not
// streamed): the refusal when an enforced guardrail blocks it, and whether
// a redaction rewrote it (committed through gt.commit).
func (c *callCore) checkWhole(gather func() guardTexts) (blocked *ir.Error, redacted bool) {
	set := c.rl.guardSet()
	call := c.guardCall()
	if !set.Applies(call, guardrail.StageResponse) {
		return nil, false
	}
	gt := gather()
	v := set.Check(c.r.Context(), guardrail.Input{Call: call, Stage: guardrail.StageResponse, Texts: gt.texts})
	c.guards = append(c.guards, v.Records...)
	if v.Blocked != nil {
		return blockedError(v.Blocked), false
	}
	if v.Redacted && gt.commit != nil {
		if err := gt.commit(); err != nil {
			return &ir.Error{Status: 500, Kind: ir.KindInternal, Code: "guardrail_redaction_failed", Message: "the redacted answer could not be rebuilt"}, false
		}
	}
	return nil, v.Redacted
}

// textKeys are the members of a JSON body's objects whose strings a model
// reads (or writes): message text, tool arguments and results, rerank
// documents. Ids, roles, types and urls are left out.
var textKeys = []string{"text", "content", "input", "output", "arguments", "parts", "query", "documents",
	"prompt", "instructions", "summary", "refusal", "delta", "part", "item", "response", "choices", "message", "requests"}

// jsonTexts are the strings under some members of a JSON body, each with
// its path, so that a redaction is written back to exactly those strings
// and every other byte of the body is kept.
type jsonTexts struct {
	raw   *[]byte
	paths []string
	orig  []string
	vals  []string
}

// gatherJSON collects the strings under fields of *raw, descending into
// arrays and into the textKeys of objects.
func gatherJSON(raw *[]byte, fields ...string) *jsonTexts {
	j := &jsonTexts{raw: raw}
	for _, f := range fields {
		j.walk(gjson.GetBytes(*raw, f), f)
	}
	j.vals = append([]string(nil), j.orig...)
	return j
}

func (j *jsonTexts) walk(v gjson.Result, path string) {
	switch {
	case v.Type == gjson.String:
		j.paths, j.orig = append(j.paths, path), append(j.orig, v.Str)
	case v.IsArray():
		for i, e := range v.Array() {
			j.walk(e, path+"."+strconv.Itoa(i))
		}
	case v.IsObject():
		for _, k := range textKeys {
			if e := v.Get(k); e.Exists() {
				j.walk(e, path+"."+k)
			}
		}
	}
}

// guardTexts hands the strings to the hook; tokens counts them with
// model's tokenizer.
func (j *jsonTexts) guardTexts(model string) guardTexts {
	gt := guardTexts{texts: make([]*string, len(j.vals)), commit: j.commit}
	for i := range j.vals {
		gt.texts[i] = &j.vals[i]
	}
	gt.tokens = func() int {
		n := 0
		for _, s := range j.vals {
			n += tokenize.Count(model, s)
		}
		return n
	}
	return gt
}

// commit writes the strings a guardrail rewrote back into the body.
func (j *jsonTexts) commit() error {
	out := *j.raw
	for i, v := range j.vals {
		if v == j.orig[i] {
			continue
		}
		var err error
		if out, err = sjson.SetBytes(out, j.paths[i], v); err != nil {
			return err
		}
	}
	*j.raw = out
	return nil
}
