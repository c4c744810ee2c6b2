package task

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// ArtifactURL is the signed client address of one artifact on the public
// address (a path only when none is configured), valid until exp.
func (s *Service) ArtifactURL(publicID, key string, exp time.Time) string {
	unix := exp.Unix()
	q := url.Values{"exp": {strconv.FormatInt(unix, 10)}, "sig": {signArtifact(s.opts.Secret, publicID, key, unix)}}
	return strings.TrimRight(s.opts.PublicAddress, "/") + "/v1/tasks/" + url.PathEscape(publicID) +
		"/artifacts/" + url.PathEscape(key) + "?" + q.Encode()
}

// signArtifact is the address signature: HMAC-SHA256 keyed by the gateway
// secret over the task, the key and the expiry. The fields are joined by
// a newline, which none of them may hold, so no two triples collide.
func signArtifact(secret, publicID, key string, exp int64) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(publicID + "\n" + key + "\n" + strconv.FormatInt(exp, 10)))
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// Reasons a signed artifact address is refused.
var (
	errArtifactSignature = errors.New("the artifact address is not validly signed")
	errArtifactExpired   = errors.New("the artifact address has expired")
)

// verifyArtifact checks a signed address's exp and sig query values at now.
func verifyArtifact(secret, publicID, key, exp, sig string, now time.Time) error {
	if secret == "" || sig == "" || strings.ContainsAny(publicID+key, "\n") {
		return errArtifactSignature
	}
	unix, err := strconv.ParseInt(exp, 10, 64)
	if err != nil || strconv.FormatInt(unix, 10) != exp {
		return errArtifactSignature
	}
	want := signArtifact(secret, publicID, key, unix)
	if !hmac.Equal([]byte(sig), []byte(want)) {
		return errArtifactSignature
	}
	if now.Unix() > unix {
		return errArtifactExpired
	}
	return nil
}

// CheckArtifactAddress checks the exp and sig query values of a signed
// artifact address now, against this gateway's secret.
func (s *Service) CheckArtifactAddress(publicID, key, exp, sig string) error {
	return verifyArtifact(s.opts.Secret, publicID, key, exp, sig, time.Now())
}
