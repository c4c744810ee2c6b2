package plugin

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/turnpike-gw/turnpike/internal/guardfetch"
)

// Marketplace limits. An index lists many plugins but stays small; a plugin
// file is capped like an upload.
const (
	maxIndexBytes      = 2 << 20
	marketplaceTimeout = 20 * time.Second
)

// Marketplace reads marketplace indexes and installs plugins from them.
type Marketplace struct {
	reg    *Registry
	client *http.Client
}

// NewMarketplace returns a marketplace client that installs into reg. A nil
// client gets a default one with a timeout that follows only http(s)
// redirects.
func NewMarketplace(reg *Registry, client *http.Client) *Marketplace {
	if client == nil {
		client = &http.Client{Timeout: marketplaceTimeout}
	}
	c := *client
	if c.Timeout == 0 {
		c.Timeout = marketplaceTimeout
	}
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= 5 {
			return errors.New("too many redirects")
		}
		if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
			return fmt.Errorf("redirect to a %s address refused", req.URL.Scheme)
		}
		return nil
	}
	return &Marketplace{reg: reg, client: &c}
}

// CatalogueItem is one plugin offered by one source.
type CatalogueItem struct {
	Source        string         `json:"source"`
	Key           string         `json:"key"`
	Name          string         `json:"name,omitempty"`
	Description   any            `json:"description,omitempty"`
	Icon          string         `json:"icon,omitempty"`
	Author        any            `json:"author,omitempty"`
	Versions      []IndexVersion `json:"versions"`
	Installed     bool           `json:"installed"`
	ActiveVersion string         `json:"active_version,omitempty"`
}

// SourceError reports a source whose index could not be read.
type SourceError struct {
	Source  string `json:"source"`
	Message string `json:"message"`
}

// Catalogue merges the indexes of every registered source. A source that
// fails is reported and the others are still listed.
func (m *Marketplace) Catalogue(ctx context.Context) ([]CatalogueItem, []SourceError, error) {
	sources, err := m.reg.db.sources(ctx)
	if err != nil {
		return nil, nil, err
	}
	states, err := m.reg.db.states(ctx)
	if err != nil {
		return nil, nil, err
	}
	active := map[string]string{}
	for _, s := range states {
		active[s.Key] = s.ActiveVersion
	}
	items := []CatalogueItem{}
	errs := []SourceError{}
	for _, s := range sources {
		idx, err := m.fetchIndex(ctx, s.URL)
		if err != nil {
			errs = append(errs, SourceError{Source: s.URL, Message: err.Error()})
			continue
		}
		for _, e := range idx.Entries {
			v, installed := active[e.Key]
			items = append(items, CatalogueItem{Source: s.URL, Key: e.Key, Name: e.Name, Description: e.Description,
				Icon: e.Icon, Author: e.Author, Versions: e.Versions, Installed: installed, ActiveVersion: v})
		}
	}
	return items, errs, nil
}

// Install downloads key@version from a registered source, checks the
// index's sha256 and that key is the entry's directory name, then uploads
// it like any other plugin (req carries the upload options).
func (m *Marketplace) Install(ctx context.Context, source, key, version string, req UploadRequest) (*UploadResult, error) {
	known, err := m.reg.db.hasSource(ctx, source)
	if err != nil {
		return nil, err
	}
	if !known {
		return nil, errorf(http.StatusNotFound, "not_found", "marketplace source %q is not registered", source)
	}
	idx, err := m.fetchIndex(ctx, source)
	if err != nil {
		return nil, errorf(http.StatusBadGateway, "marketplace_unavailable", "reading the index failed: %v", err)
	}
	entry, ver, err := idx.find(key, version)
	if err != nil {
		return nil, err
	}
	if entry.Directory != key {
		return nil, errorf(http.StatusBadRequest, "marketplace_key_mismatch",
			"the index lists key %q in directory %q; a key installed from a marketplace must equal its directory name", key, entry.Directory)
	}
	data, err := m.fetch(ctx, ver.URL, MaxSourceBytes)
	if err != nil {
		return nil, errorf(http.StatusBadGateway, "marketplace_unavailable", "downloading %s failed: %v", ver.URL, err)
	}
	if got := SourceSHA256(string(data)); got != ver.SHA256 {
		return nil, errorf(http.StatusBadRequest, "marketplace_checksum_mismatch",
			"the downloaded file's sha256 is %s but the index says %s", got, ver.SHA256)
	}
	req.Source = string(data)
	req.Origin, req.OriginURL = OriginMarketplace, ver.URL
	req.ExpectedKey, req.ExpectedVersion = key, version
	return m.reg.Upload(ctx, req)
}

func (m *Marketplace) fetchIndex(ctx context.Context, source string) (*Index, error) {
	data, err := m.fetch(ctx, source, maxIndexBytes)
	if err != nil {
		return nil, err
	}
	base, _ := url.Parse(source)
	return ParseIndex(data, base)
}

// fetch GETs an http(s) address and reads at most max bytes of a 200 body.
func (m *Marketplace) fetch(ctx context.Context, address string, max int64) ([]byte, error) {
	u, err := url.Parse(address)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%q is not an http(s) address", address)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	resp, err := m.client.Do(req)
	if err != nil {
		return nil, scrubURLError(err)
	}
	return guardfetch.ReadOK(resp, max)
}

// scrubURLError drops the URL wrapper, whose text repeats the address with
// any userinfo it carried.
func scrubURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// ValidateSourceURL checks a marketplace index address: http(s), a host, no
// credentials or fragment.
func ValidateSourceURL(raw string) (string, error) {
	raw = strings.TrimSpace(raw)
	u, err := url.Parse(raw)
	switch {
	case raw == "" || err != nil:
		return "", errors.New("url must be an http(s) address of an index.json")
	case u.Scheme != "http" && u.Scheme != "https":
		return "", errors.New("url must use http or https")
	case u.Host == "":
		return "", errors.New("url must name a host")
	case u.User != nil:
		return "", errors.New("url must not carry credentials")
	case u.Fragment != "":
		return "", errors.New("url must not have a fragment")
	case len(raw) > 255:
		return "", errors.New("url must be at most 255 characters")
	}
	return raw, nil
}
