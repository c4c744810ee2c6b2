package task

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/turnpike-gw/turnpike/internal/task/egress"
)

// defaultImageDownloadBytes caps one fetched image when MAX_FILE_DOWNLOAD_MB
// is not set (its default, 64 MiB).
const defaultImageDownloadBytes = 64 << 20

// FetchImage fetches one image over http(s) within the size cap and the
// upstream timeout. It goes through the same guard as credentialless
// content requests: no private or loopback targets, first address and
// every redirect, unless allow_private_content is on.
func (s *Service) FetchImage(ctx context.Context, raw string) ([]byte, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("the image address is not an http(s) URL")
	}
	ctx, cancel := context.WithTimeout(ctx, s.opts.UpstreamTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	client := s.contentClient(&egress.ContentDescriptor{Descriptor: &egress.Descriptor{URL: u, Method: http.MethodGet}, Credentialless: true})
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetching %s: %w", egress.HostPort(u), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("fetching %s: HTTP %d", egress.HostPort(u), resp.StatusCode)
	}
	limit := s.opts.MaxFileBytes
	if limit <= 0 {
		limit = defaultImageDownloadBytes
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", egress.HostPort(u), err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("the image at %s is larger than %d bytes", egress.HostPort(u), limit)
	}
	return data, nil
}
