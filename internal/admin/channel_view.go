package admin

import (
	"strings"
	"time"

	"github.com/turnpike-gw/turnpike/internal/routing"
	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/upstream"
)

// channelView is a channel as the API shows it. The provider key is
// write-only: only a masked hint of it ever leaves the server.
type channelView struct {
	ID           int64              `json:"id"`
	Name         string             `json:"name"`
	Type         int                `json:"type"`
	TypeName     string             `json:"type_name"`
	BaseURL      string             `json:"base_url"`
	KeyMasked    string             `json:"key_masked"`
	Models       []string           `json:"models"`
	Groups       []string           `json:"groups"`
	Priority     int64              `json:"priority"`
	Weight       int                `json:"weight"`
	ModelMapping map[string]string  `json:"model_mapping"`
	Settings     map[string]any     `json:"settings"`
	Cost         *store.ChannelCost `json:"cost"`
	Status       string             `json:"status"`
	Health       routing.Status     `json:"health"`
	// Keys is each key of the list, masked, with its own health.
	Keys      []keyView `json:"keys"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// keyView is one key of a channel as the API shows it (CONTRACT §9
// "Several keys per channel"): never more of it than MaskKey shows.
type keyView struct {
	Index  int    `json:"index"`
	Masked string `json:"masked"`
	State  string `json:"state"`
	Reason string `json:"reason"`
}

func (a *API) channelView(c *store.Channel) channelView {
	keys := routing.SplitKeys(c.Type, c.Key)
	v := channelView{ID: c.ID, Name: c.Name, Type: c.Type, TypeName: upstream.TypeName(c.Type), BaseURL: c.BaseURL,
		KeyMasked: maskKeys(keys), Models: c.Models, Groups: c.Groups, Priority: c.Priority, Weight: c.Weight,
		ModelMapping: c.ModelMapping, Settings: maskedSettings(c.Settings), Cost: c.Cost, Status: c.Status, CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt}
	if v.Models == nil {
		v.Models = []string{}
	}
	if v.Groups == nil {
		v.Groups = []string{}
	}
	if v.ModelMapping == nil {
		v.ModelMapping = map[string]string{}
	}
	if v.Settings == nil {
		v.Settings = map[string]any{}
	}
	health := a.d.Router != nil && a.d.Router.Health != nil
	v.Health = routing.Status{State: routing.StateHealthy}
	if health {
		v.Health = a.d.Router.Health.ChannelStatus(c.ID, len(keys))
	}
	v.Keys = make([]keyView, len(keys))
	for i, k := range keys {
		kv := keyView{Index: i, Masked: routing.MaskKey(k), State: routing.StateHealthy}
		if health {
			st := a.d.Router.Health.Status(c.ID, i)
			kv.State, kv.Reason = st.State, st.Reason
		}
		if c.Status != store.StatusEnabled {
			kv.State, kv.Reason = routing.StateDisabled, "the channel is disabled by an administrator"
		}
		v.Keys[i] = kv
	}
	if v.Health.Since == nil {
		created := c.CreatedAt
		v.Health.Since = &created // healthy since it was made
	}
	if c.Status != store.StatusEnabled {
		// An administrator's switch: it outranks whatever health says.
		updated := c.UpdatedAt
		v.Health = routing.Status{State: routing.StateDisabled, Reason: "disabled by an administrator", Since: &updated}
	}
	return v
}

// maskSecret hints at a provider key or header value without revealing
// it, as every secret is shown (store.MaskSecret).
func maskSecret(k string) string { return store.MaskSecret(k) }

// maskKeys is key_masked: each key of the channel masked as its keys[]
// entry shows it, so one key never shows two ways.
func maskKeys(keys []string) string {
	masked := make([]string, len(keys))
	for i, k := range keys {
		masked[i] = maskSecret(k)
	}
	return strings.Join(masked, ", ")
}

// redact removes the channel's keys from text that may quote one, such as
// an upstream error echoing the credential it rejected.
func redact(text string, c *store.Channel) string {
	secrets := append([]string{c.Key}, routing.SplitKeys(c.Type, c.Key)...)
	for _, v := range headerValues(c.Settings) {
		secrets = append(secrets, v)
	}
	for _, key := range secrets {
		if len(key) >= 4 {
			text = strings.ReplaceAll(text, key, maskSecret(key))
		}
	}
	return text
}
