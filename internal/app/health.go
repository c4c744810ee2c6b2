package app

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/turnpike-gw/turnpike/internal/relay"
	"github.com/turnpike-gw/turnpike/internal/routing"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// healthRefresh is how often a node reads the channel health the others
// wrote, and looks for auto-disabled channels due for a probe.
const healthRefresh = 2 * time.Second

// wireHealth lets channel health probe through the relay and announce its
// transitions as channel_down / channel_up alerts. Health calls OnChange
// once per transition cluster-wide, on the node that made it, so the
// notifier needs no deduplication of its own; it queues and returns.
func (a *App) wireHealth() {
	a.Router.Health.Probe = func(ctx context.Context, ch *routing.Channel, key int) error {
		return relay.ProbeChannel(ctx, a.Relay, &ch.Channel, key)
	}
	if a.Notify != nil {
		a.Router.Health.SetOnChange(func(ev routing.HealthEvent) {
			a.Notify.ChannelEvent(context.Background(), ev.ChannelID, ev.ChannelName, ev.KeyIndex, ev.State, ev.Reason, ev.Up)
		})
	}
}

// channelStates is the turnpike_channel_state{channel,state} gauge: 1 for
// each channel's current state, 0 for the other three, read at scrape time
// so it never lags the admin API. A channel with several keys is in the
// state the admin API shows for it (healthy while any key is).
type channelStates struct{ router *routing.Router }

var channelStateDesc = prometheus.NewDesc("turnpike_channel_state",
	"Channel health: 1 for the state the channel is in.", []string{"channel", "state"}, nil)

var allStates = []string{routing.StateHealthy, routing.StateCooling, routing.StateAutoDisabled, routing.StateDisabled}

func (c channelStates) Describe(ch chan<- *prometheus.Desc) { ch <- channelStateDesc }

func (c channelStates) Collect(ch chan<- prometheus.Metric) {
	for _, chn := range c.router.Table().Channels() {
		state := routing.StateDisabled
		if chn.Status == store.StatusEnabled {
			state = c.router.Health.ChannelStatus(chn.ID, chn.KeyCount()).State
		}
		for _, s := range allStates {
			v := 0.0
			if s == state {
				v = 1
			}
			ch <- prometheus.MustNewConstMetric(channelStateDesc, prometheus.GaugeValue, v, chn.Name, s)
		}
	}
}
