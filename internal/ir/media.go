package ir

import "strings"

// ParseDataURL splits data:<mime>;base64,<data>, the form clients send
// inline media in. Only base64 data URLs are accepted: providers cannot
// take percent-encoded bytes. Parameters after the media type are dropped.
func ParseDataURL(u string) (mime, data string, ok bool) {
	head, data, found := strings.Cut(strings.TrimPrefix(u, "data:"), ",")
	if !found || !strings.HasSuffix(head, ";base64") {
		return "", "", false
	}
	mime = strings.TrimSuffix(head, ";base64")
	if i := strings.IndexByte(mime, ';'); i >= 0 {
		mime = mime[:i]
	}
	return mime, data, data != ""
}

// SniffImageType recognises PNG, JPEG, GIF and WebP from the base64 text of
// their magic numbers, for media that came without a type; "" otherwise.
func SniffImageType(b64 string) string {
	switch {
	case strings.HasPrefix(b64, "iVBORw0KGgo"):
		return "image/png"
	case strings.HasPrefix(b64, "/9j/"):
		return "image/jpeg"
	case strings.HasPrefix(b64, "R0lGOD"):
		return "image/gif"
	case strings.HasPrefix(b64, "UklGR"):
		return "image/webp"
	}
	return ""
}
