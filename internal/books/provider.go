package books

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// ProviderHeader is the columns of a provider's usage export, one row per
// UTC day and model.
var ProviderHeader = []string{"date", "model", "requests", "input_tokens", "output_tokens", "cost_usd"}

// MaxProviderRows bounds an uploaded export: a year of days for a few
// hundred models.
const MaxProviderRows = 200_000

// FlagPct is how far apart ours and theirs may be before a line is flagged.
const FlagPct = 2.0

// Usage is one side of a provider comparison line. CostUSD is null where
// that side has no cost.
type Usage struct {
	Requests     int64        `json:"requests"`
	InputTokens  int64        `json:"input_tokens"`
	OutputTokens int64        `json:"output_tokens"`
	CostUSD      *json.Number `json:"cost_usd"`
	cost         *big.Rat     // nil: this side has no cost
}

// ProviderLine is one day and model: our rows routed to the channel beside
// the provider's figures. DifferencePct is (ours − theirs) ÷ theirs in per
// cent, of the cost where both sides have one and of the tokens otherwise.
type ProviderLine struct {
	Date          string  `json:"date"`
	Model         string  `json:"model"`
	Ours          Usage   `json:"ours"`
	Theirs        Usage   `json:"theirs"`
	DifferencePct float64 `json:"difference_pct"`
	Compared      string  `json:"compared"` // cost_usd or tokens
	Flag          bool    `json:"flag"`
}

// ProviderReport is the comparison of a channel with its provider.
type ProviderReport struct {
	ChannelID int64          `json:"channel_id"`
	Since     string         `json:"since"`
	Until     string         `json:"until"`
	Items     []ProviderLine `json:"items"`
	Flagged   int            `json:"flagged"`
}

// CSVError is an export that cannot be read; its message names the line.
type CSVError struct{ msg string }

func (e *CSVError) Error() string { return e.msg }

func csvErr(format string, args ...any) error { return &CSVError{fmt.Sprintf(format, args...)} }

type lineKey struct{ date, model string }

// ParseProviderCSV reads a provider's usage export (ProviderHeader, in any
// column order).
func ParseProviderCSV(r io.Reader) (map[lineKey]*Usage, error) {
	cr := csv.NewReader(r)
	cr.TrimLeadingSpace = true
	cr.ReuseRecord = true
	col, err := providerColumns(cr)
	if err != nil {
		return nil, err
	}
	out := map[lineKey]*Usage{}
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, csvErr("line %d cannot be read: %v", line, err)
		}
		if len(out) >= MaxProviderRows {
			return nil, csvErr("the CSV has more than %d rows", MaxProviderRows)
		}
		k, u, err := providerLine(line, func(name string) string { return strings.TrimSpace(rec[col[name]]) })
		if err != nil {
			return nil, err
		}
		if out[k] != nil {
			return nil, csvErr("line %d: %s %s appears twice; the export has one row per day and model", line, k.date, k.model)
		}
		out[k] = u
	}
	if len(out) == 0 {
		return nil, csvErr("the CSV has a header but no rows")
	}
	return out, nil
}

// providerColumns reads the header: each column of ProviderHeader and where
// it is.
func providerColumns(cr *csv.Reader) (map[string]int, error) {
	head, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, csvErr("the CSV is empty; its first line must be the header %s", strings.Join(ProviderHeader, ","))
	}
	if err != nil {
		return nil, csvErr("the CSV's header cannot be read: %v", err)
	}
	col := map[string]int{}
	for i, h := range head {
		h = strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")))
		col[h] = i
	}
	for _, name := range ProviderHeader {
		if _, ok := col[name]; !ok {
			return nil, csvErr("the CSV's header lacks the column %q; it must be %s", name, strings.Join(ProviderHeader, ","))
		}
	}
	return col, nil
}

// providerLine reads one row, whose columns field gives by name.
func providerLine(line int, field func(string) string) (lineKey, *Usage, error) {
	day, err := time.Parse(time.DateOnly, field("date"))
	if err != nil {
		return lineKey{}, nil, csvErr("line %d: date %q is not a UTC day such as 2026-01-31", line, field("date"))
	}
	model := field("model")
	if model == "" {
		return lineKey{}, nil, csvErr("line %d: model is empty", line)
	}
	u := &Usage{}
	for _, n := range []struct {
		name string
		dst  *int64
	}{{"requests", &u.Requests}, {"input_tokens", &u.InputTokens}, {"output_tokens", &u.OutputTokens}} {
		v := field(n.name)
		if v == "" {
			continue
		}
		if *n.dst, err = strconv.ParseInt(v, 10, 64); err != nil || *n.dst < 0 {
			return lineKey{}, nil, csvErr("line %d: %s %q is not a whole number of zero or more", line, n.name, v)
		}
	}
	if v := field("cost_usd"); v != "" {
		c, ok := new(big.Rat).SetString(strings.TrimPrefix(v, "$"))
		if !ok || c.Sign() < 0 {
			return lineKey{}, nil, csvErr("line %d: cost_usd %q is not a dollar amount of zero or more", line, v)
		}
		n := number(c)
		u.cost, u.CostUSD = c, &n
	}
	return lineKey{day.Format(time.DateOnly), model}, u, nil
}

// providerRow is the part of a row's other the comparison reads.
type providerRow struct {
	UpstreamModel   string `json:"upstream_model"`
	UpstreamCostUSD string `json:"upstream_cost_usd"`
	Adjustment      bool   `json:"adjustment"`
}

// CompareProvider sets theirs (ParseProviderCSV) beside the consume and
// refund rows routed to channelID on the export's days. Ours are named by
// the model the provider was asked for (other.upstream_model); a line of
// theirs under the gateway's own name of a model is matched too. The
// export's days are whole UTC days, read from the channel's daily rollups;
// until those hold every row (their fill after an upgrade), from its rows.
func CompareProvider(ctx context.Context, st store.Store, channelID int64, theirs map[lineKey]*Usage) (*ProviderReport, error) {
	first, last := dateSpan(theirs)
	since, _ := time.Parse(time.DateOnly, first)
	until, _ := time.Parse(time.DateOnly, last)
	ours := &ourLines{channelID: channelID, usage: map[lineKey]*Usage{}, alias: map[lineKey]lineKey{}}
	w := store.Window{Since: since, Until: until.Add(24 * time.Hour)}
	ready, err := st.Rollups().ChannelsReady(ctx)
	if err != nil {
		return nil, err
	}
	if ready {
		var lines []store.ChannelLine
		lines, err = st.Rollups().SumChannels(ctx, store.ChannelQuery{Since: w.Since, Until: w.Until, ChannelID: channelID, Granularity: "day", Days: true})
		for _, l := range lines {
			ours.addLine(l)
		}
	} else {
		err = st.Books().EachChannelLog(ctx, channelID, w, []string{store.LogConsume, store.LogRefund}, ours.add)
	}
	if err != nil {
		return nil, err
	}
	rep := &ProviderReport{ChannelID: channelID, Since: first, Until: last, Items: []ProviderLine{}}
	ours.match(rep, theirs)
	sort.Slice(rep.Items, func(i, j int) bool {
		a, b := rep.Items[i], rep.Items[j]
		if a.Date != b.Date {
			return a.Date < b.Date
		}
		return a.Model < b.Model
	})
	return rep, nil
}

// dateSpan is the first and last day of the provider's lines.
func dateSpan(theirs map[lineKey]*Usage) (first, last string) {
	for k := range theirs {
		if first == "" || k.date < first {
			first = k.date
		}
		if k.date > last {
			last = k.date
		}
	}
	return first, last
}

// ourLines totals the gateway's usage rows of one channel per day and the
// model name the upstream knows.
type ourLines struct {
	channelID int64
	usage     map[lineKey]*Usage
	alias     map[lineKey]lineKey // the gateway's name of a model → the upstream's
}

func (o *ourLines) add(l store.UsageLog) error {
	if l.ChannelID != o.channelID {
		return nil
	}
	var row providerRow
	_ = json.Unmarshal(l.Other, &row)
	model := row.UpstreamModel
	if model == "" {
		model = l.Model
	}
	k := lineKey{l.CreatedAt.UTC().Format(time.DateOnly), model}
	if model != l.Model {
		o.alias[lineKey{k.date, l.Model}] = k
	}
	u := o.usage[k]
	if u == nil {
		u = &Usage{}
		o.usage[k] = u
	}
	cost, ok := new(big.Rat).SetString(row.UpstreamCostUSD)
	if ok && u.cost == nil {
		u.cost = new(big.Rat)
	}
	if l.Type == store.LogRefund {
		if ok {
			u.cost.Sub(u.cost, cost)
		}
		return nil
	}
	if !row.Adjustment {
		u.Requests++
	}
	u.InputTokens += int64(l.PromptTokens)
	u.OutputTokens += int64(l.CompletionTokens)
	if ok {
		u.cost.Add(u.cost, cost)
	}
	return nil
}

// addLine adds a day's channel bucket (store.ChannelLine), as add adds
// its rows.
func (o *ourLines) addLine(l store.ChannelLine) {
	k := lineKey{l.Hour.Format(time.DateOnly), l.UpstreamModel}
	if l.UpstreamModel != l.Model {
		o.alias[lineKey{k.date, l.Model}] = k
	}
	u := o.usage[k]
	if u == nil {
		u = &Usage{}
		o.usage[k] = u
	}
	if l.CostRows > 0 && u.cost == nil {
		u.cost = new(big.Rat)
	}
	if u.cost != nil {
		u.cost.Add(u.cost, picoUSD(l.UpstreamCost))
	}
	u.Requests += l.Requests
	u.InputTokens += l.InputTokens
	u.OutputTokens += l.OutputTokens
}

// match pairs every provider line with the gateway's (under the model's
// upstream name, or its own when the provider used that) and adds the
// gateway's lines the provider does not have.
func (o *ourLines) match(rep *ProviderReport, theirs map[lineKey]*Usage) {
	matched := map[lineKey]bool{}
	for k, t := range theirs {
		ok := k
		if o.usage[ok] == nil {
			if a, found := o.alias[k]; found && theirs[a] == nil {
				ok = a
			}
		}
		u := o.usage[ok]
		if u == nil {
			u = &Usage{}
		} else {
			matched[ok] = true
		}
		rep.add(k, u, t)
	}
	for k, u := range o.usage {
		if !matched[k] {
			rep.add(k, u, &Usage{})
		}
	}
}

func (rep *ProviderReport) add(k lineKey, ours, theirs *Usage) {
	if ours.cost != nil {
		n := number(ours.cost)
		ours.CostUSD = &n
	}
	l := ProviderLine{Date: k.date, Model: k.model, Ours: *ours, Theirs: *theirs}
	if ours.cost != nil && theirs.cost != nil {
		l.Compared = "cost_usd"
		l.DifferencePct = pct(ours.cost, theirs.cost)
	} else {
		l.Compared = "tokens"
		l.DifferencePct = pct(big.NewRat(ours.InputTokens+ours.OutputTokens, 1), big.NewRat(theirs.InputTokens+theirs.OutputTokens, 1))
	}
	l.Flag = math.Abs(l.DifferencePct) > FlagPct
	if l.Flag {
		rep.Flagged++
	}
	rep.Items = append(rep.Items, l)
}

// pct is (ours − theirs) ÷ theirs in per cent, rounded to hundredths;
// against nothing, anything is 100 % more.
func pct(ours, theirs *big.Rat) float64 {
	if theirs.Sign() == 0 {
		if ours.Sign() == 0 {
			return 0
		}
		return 100
	}
	d := new(big.Rat).Sub(ours, theirs)
	d.Quo(d, theirs)
	f, _ := d.Mul(d, big.NewRat(100, 1)).Float64()
	return math.Round(f*100) / 100
}
