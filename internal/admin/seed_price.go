package admin

import (
	"encoding/json"
	"reflect"
	"time"

	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// priceFromSeed checks a seed price with the API's rules by sending it
// through the same decoder.
func priceFromSeed(name string, sp config.SeedPrice) (store.ModelPrice, error) {
	raw, err := json.Marshal(sp)
	if err != nil {
		return store.ModelPrice{}, err
	}
	f, err := parseFields(raw, priceFields)
	if err != nil {
		return store.ModelPrice{}, err
	}
	return readPrice(f, name)
}

func samePrice(a, b *store.ModelPrice) bool {
	x, y := *a, *b
	x.UpdatedAt, y.UpdatedAt = time.Time{}, time.Time{}
	x.Extra, y.Extra = nil, nil
	// Which version holds the price does not make it another price.
	x.Version, x.EffectiveFrom, x.Source, x.Actor = 0, time.Time{}, "", ""
	y.Version, y.EffectiveFrom, y.Source, y.Actor = 0, time.Time{}, "", ""
	return reflect.DeepEqual(x, y) && jsonEqual(a.Extra, b.Extra)
}

func jsonEqual(a, b json.RawMessage) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}
