package notify

import (
	"context"
	"encoding/json"
)

// catalogueEvent is the alert of a scheduled price catalogue check.
type catalogueEvent struct {
	Event      string `json:"event"`
	Changed    int    `json:"changed"`
	Suspicious int    `json:"suspicious"`
}

// PriceCatalogueChanged sends price_catalogue_changed. mark names the
// difference found: every node checks on the same schedule, and a
// difference already announced (by any node) is not announced again.
func (n *Notifier) PriceCatalogueChanged(_ context.Context, changed, suspicious int, mark string) {
	if !n.enabled() {
		return
	}
	body, _ := json.Marshal(catalogueEvent{Event: "price_catalogue_changed", Changed: changed, Suspicious: suspicious})
	n.enqueue(delivery{body: body, mark: mark})
}
