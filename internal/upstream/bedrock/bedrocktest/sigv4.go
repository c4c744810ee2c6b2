// Package bedrocktest is a fake Amazon Bedrock for tests: it checks each
// request's AWS Signature Version 4 the way AWS does (recomputing it from
// the request as received, with its own implementation of the canonical
// request, not the SDK's), or its Bedrock API key, and answers Converse
// and ConverseStream calls as scripted, streams in real AWS event-stream
// frames.
package bedrocktest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Credentials are what the fake accepts.
type Credentials struct {
	AccessKeyID, SecretAccessKey string
	// SessionToken, when set, must come as X-Amz-Security-Token and be
	// signed.
	SessionToken string
	// APIKey, when set, is accepted as "Authorization: Bearer <APIKey>".
	APIKey string
	Region string
	// Service is the signing name; "bedrock" when empty.
	Service string
}

// maxSkew is how far a request's X-Amz-Date may be from the clock.
const maxSkew = 5 * time.Minute

// signingError is a refusal as AWS words it: an exception name and a
// message.
type signingError struct {
	typ, msg string
}

func (e *signingError) Error() string { return e.typ + ": " + e.msg }

// VerifySigV4 recomputes the signature of r (whose body is body) and
// compares it with the one in its Authorization header.
func (c Credentials) VerifySigV4(r *http.Request, body []byte, now time.Time) error {
	auth := r.Header.Get("Authorization")
	const algo = "AWS4-HMAC-SHA256 "
	if !strings.HasPrefix(auth, algo) {
		return &signingError{"MissingAuthenticationTokenException", "Missing Authentication Token"}
	}
	fields := map[string]string{}
	for _, f := range strings.Split(strings.TrimPrefix(auth, algo), ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(f), "=")
		fields[k] = v
	}
	scope := strings.Split(fields["Credential"], "/")
	if len(scope) != 5 || scope[4] != "aws4_request" {
		return &signingError{"IncompleteSignatureException", "malformed Credential"}
	}
	if scope[0] != c.AccessKeyID {
		return &signingError{"UnrecognizedClientException", "The security token included in the request is invalid."}
	}
	service := c.Service
	if service == "" {
		service = "bedrock"
	}
	if scope[2] != c.Region || scope[3] != service {
		return &signingError{"InvalidSignatureException", fmt.Sprintf("Credential should be scoped to region %s and service %s", c.Region, service)}
	}
	amzDate := r.Header.Get("X-Amz-Date")
	at, err := time.Parse("20060102T150405Z", amzDate)
	if err != nil || scope[1] != amzDate[:8] {
		return &signingError{"IncompleteSignatureException", "X-Amz-Date is missing or does not match the credential scope"}
	}
	if d := now.Sub(at); d > maxSkew || d < -maxSkew {
		return &signingError{"InvalidSignatureException", "Signature expired"}
	}
	signed := strings.Split(fields["SignedHeaders"], ";")
	if !contains(signed, "host") || !contains(signed, "x-amz-date") || !sort.StringsAreSorted(signed) {
		return &signingError{"IncompleteSignatureException", "SignedHeaders must be sorted and include host and x-amz-date"}
	}
	if c.SessionToken != "" && (r.Header.Get("X-Amz-Security-Token") != c.SessionToken || !contains(signed, "x-amz-security-token")) {
		return &signingError{"UnrecognizedClientException", "The security token included in the request is invalid."}
	}
	sum := sha256.Sum256(body)
	payload := hex.EncodeToString(sum[:])
	if h := r.Header.Get("X-Amz-Content-Sha256"); h != "" && h != payload {
		return &signingError{"InvalidSignatureException", "payload hash mismatch"}
	}
	canonical := strings.Join([]string{
		r.Method,
		canonicalURI(r.URL),
		canonicalQuery(r.URL.Query()),
		canonicalHeaders(r, signed),
		strings.Join(signed, ";"),
		payload,
	}, "\n")
	digest := sha256.Sum256([]byte(canonical))
	toSign := strings.Join([]string{"AWS4-HMAC-SHA256", amzDate, strings.Join(scope[1:], "/"), hex.EncodeToString(digest[:])}, "\n")
	key := hmacSHA256([]byte("AWS4"+c.SecretAccessKey), scope[1])
	key = hmacSHA256(key, scope[2])
	key = hmacSHA256(key, scope[3])
	key = hmacSHA256(key, "aws4_request")
	want := hex.EncodeToString(hmacSHA256(key, toSign))
	if !hmac.Equal([]byte(want), []byte(fields["Signature"])) {
		return &signingError{"InvalidSignatureException", "The request signature we calculated does not match the signature you provided."}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func hmacSHA256(key []byte, data string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(data))
	return m.Sum(nil)
}

// uriEncode escapes every byte but the unreserved ones, as SigV4 does;
// slash stays when keepSlash.
func uriEncode(s string, keepSlash bool) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' || c == '~' || (keepSlash && c == '/') {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

// canonicalURI is the path as sent, encoded once more: services other
// than S3 sign the path doubly encoded.
func canonicalURI(u *url.URL) string {
	p := u.EscapedPath()
	if p == "" {
		return "/"
	}
	return uriEncode(p, true)
}

func canonicalQuery(q url.Values) string {
	var pairs []string
	for k, vs := range q {
		for _, v := range vs {
			pairs = append(pairs, uriEncode(k, false)+"="+uriEncode(v, false))
		}
	}
	sort.Strings(pairs)
	return strings.Join(pairs, "&")
}

func canonicalHeaders(r *http.Request, signed []string) string {
	var b strings.Builder
	for _, name := range signed {
		var vals []string
		switch name {
		case "host":
			vals = []string{r.Host}
		case "content-length":
			vals = []string{strconv.FormatInt(r.ContentLength, 10)}
		default:
			vals = append([]string(nil), r.Header.Values(name)...)
		}
		for i, v := range vals {
			vals[i] = strings.Join(strings.Fields(v), " ")
		}
		b.WriteString(name + ":" + strings.Join(vals, ",") + "\n")
	}
	return b.String()
}
