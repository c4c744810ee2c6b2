package admin

import (
	"net/http"

	"github.com/turnpike-gw/turnpike/internal/apijson"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// priceHistory lists the model's price versions, newest first. A deleted
// model's versions stay listed: a past call's price can still be shown.
func (a *API) priceHistory(w http.ResponseWriter, r *http.Request, model string) error {
	page, err := parsePage(r)
	if err != nil {
		return err
	}
	h, err := a.d.Store.Prices().History(r.Context(), model)
	if err != nil {
		return err
	}
	if len(h) == 0 {
		return notFound("model price")
	}
	for i := range h {
		if h[i].Tiers == nil {
			h[i].Tiers = []store.PriceTier{}
		}
	}
	apijson.Write(w, http.StatusOK, newList(pageOf(h, page), len(h)))
	return nil
}
