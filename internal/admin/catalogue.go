package admin

import (
	"context"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/turnpike-gw/turnpike/internal/apijson"
	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/catalogue"
	"github.com/turnpike-gw/turnpike/internal/guardfetch"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// MaxCatalogueBytes bounds a price catalogue, fetched or sent: the widely
// used per-token file is a few megabytes.
const MaxCatalogueBytes = 32 << 20

func (a *API) routeCatalogue(mux *http.ServeMux) {
	a.route(mux, "GET /api/models/catalogue", store.RoleAdmin, "price catalogue", a.exportCatalogue)
	a.route(mux, "POST /api/models/catalogue/preview", store.RoleRoot, "price catalogue", a.previewCatalogue)
	a.route(mux, "POST /api/models/catalogue/apply", store.RoleRoot, "price catalogue", a.applyCatalogue)
}

// exportCatalogue answers the gateway's prices as a catalogue that preview
// and apply read back (another gateway's, or this one's later).
func (a *API) exportCatalogue(w http.ResponseWriter, r *http.Request, _ *auth.Principal) error {
	prices, err := a.d.Store.Prices().List(r.Context())
	if err != nil {
		return err
	}
	apijson.Write(w, http.StatusOK, catalogue.ExportOf(prices))
	return nil
}

// catalogueRequest is a preview or apply body.
type catalogueRequest struct {
	cat              catalogue.Catalogue
	models           []string
	maxRatio         float64
	acceptSuspicious bool
}

func (a *API) readCatalogueRequest(w http.ResponseWriter, r *http.Request) (*catalogueRequest, error) {
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxCatalogueBytes))
	if err != nil {
		return nil, err
	}
	f, err := parseFields(data, []string{"url", "catalogue", "models", "max_change_ratio", "accept_suspicious"})
	if err != nil {
		return nil, err
	}
	req := &catalogueRequest{}
	if _, err := getList(f, "models", &req.models); err != nil {
		return nil, err
	}
	if _, err := get(f, "max_change_ratio", &req.maxRatio); err != nil {
		return nil, err
	}
	if f.has("max_change_ratio") && req.maxRatio <= 1 {
		return nil, badField("max_change_ratio", "must be a number above 1")
	}
	if _, err := get(f, "accept_suspicious", &req.acceptSuspicious); err != nil {
		return nil, err
	}
	var raw []byte
	switch {
	case f.has("url") == f.has("catalogue"):
		return nil, badRequest("send exactly one of url and catalogue")
	case f.has("catalogue"):
		raw = f["catalogue"]
	default:
		var address string
		if _, err := get(f, "url", &address); err != nil {
			return nil, err
		}
		if raw, err = a.fetchCatalogue(r.Context(), address); err != nil {
			return nil, err
		}
	}
	if req.cat, err = catalogue.Parse(raw); err != nil {
		return nil, errorf(http.StatusBadRequest, "invalid_catalogue", "%v", err)
	}
	return req, nil
}

// fetchCatalogue reads a catalogue address with the content guard.
func (a *API) fetchCatalogue(ctx context.Context, address string) ([]byte, error) {
	if a.d.FetchCatalogue == nil {
		return nil, errorf(http.StatusNotImplemented, "not_implemented", "this gateway does not fetch catalogues; send the catalogue itself")
	}
	raw, err := a.d.FetchCatalogue(ctx, address)
	switch {
	case errors.Is(err, guardfetch.ErrBlocked):
		return nil, badField("url", "%v", err)
	case err != nil:
		return nil, errorf(http.StatusBadGateway, "catalogue_unavailable", "the catalogue could not be read: %v", err)
	}
	return raw, nil
}

func (a *API) previewCatalogue(w http.ResponseWriter, r *http.Request, _ *auth.Principal) error {
	req, err := a.readCatalogueRequest(w, r)
	if err != nil {
		return err
	}
	prices, err := a.d.Store.Prices().List(r.Context())
	if err != nil {
		return err
	}
	apijson.Write(w, http.StatusOK, catalogue.Compare(prices, req.cat, req.models, req.maxRatio))
	return nil
}

// appliedVersion names a price version a catalogue apply made.
type appliedVersion struct {
	Model   string `json:"model"`
	Version int64  `json:"version"`
}

// catalogueApplied is what an apply did: the changes made, the models
// added, the suspicious changes held back, and the versions written.
type catalogueApplied struct {
	Applied  []catalogue.Change `json:"applied"`
	Added    []catalogue.Added  `json:"added"`
	HeldBack []catalogue.Change `json:"held_back"`
	Versions []appliedVersion   `json:"versions"`
}

// applyCatalogue writes each changed or added model's new price as a
// version with source catalogue, effective now.
func (a *API) applyCatalogue(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	req, err := a.readCatalogueRequest(w, r)
	if err != nil {
		return err
	}
	prices, err := a.d.Store.Prices().List(r.Context())
	if err != nil {
		return err
	}
	d := catalogue.Compare(prices, req.cat, req.models, req.maxRatio)
	out := catalogueApplied{Applied: d.Changed, Added: d.Added, HeldBack: d.Suspicious, Versions: []appliedVersion{}}
	if req.acceptSuspicious {
		out.Applied, out.HeldBack = append(out.Applied, d.Suspicious...), []catalogue.Change{}
	}
	for _, np := range d.Updated(prices, req.acceptSuspicious) {
		// A new version of its own, effective now, whatever the version
		// np was read from.
		np.Version, np.EffectiveFrom, np.UpdatedAt = 0, time.Time{}, time.Time{}
		np.Source, np.Actor = store.PriceSourceCatalogue, actorOf(p)
		if err := a.d.Store.Prices().Upsert(r.Context(), np); err != nil {
			return err
		}
		h, err := a.d.Store.Prices().History(r.Context(), np.Name)
		if err != nil {
			return err
		}
		if len(h) > 0 {
			out.Versions = append(out.Versions, appliedVersion{Model: np.Name, Version: h[0].Version})
		}
	}
	if len(out.Versions) > 0 {
		if err := a.reload(r.Context()); err != nil {
			return err
		}
	}
	apijson.Write(w, http.StatusOK, out)
	return nil
}
