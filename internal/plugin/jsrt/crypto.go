package jsrt

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/grafana/sobek"
)

// hmacSHA256 signs message with secret, as published plugins call it:
// utils.hmacSHA256(message, secret[, encoding]).
func hmacSHA256(message, secret []byte) []byte {
	mac := hmac.New(sha256.New, secret)
	mac.Write(message)
	return mac.Sum(nil)
}

// encodeDigest renders a digest as "hex" (default), "base64" or "base64url"
// (unpadded).
func encodeDigest(sum []byte, encoding string) (string, error) {
	switch encoding {
	case "", "hex":
		return hex.EncodeToString(sum), nil
	case "base64":
		return base64.StdEncoding.EncodeToString(sum), nil
	case "base64url":
		return base64.RawURLEncoding.EncodeToString(sum), nil
	}
	return "", fmt.Errorf("unknown encoding %q (use hex, base64 or base64url)", encoding)
}

func utilHMACSHA256(rt *sobek.Runtime, _ *hostEnv, call sobek.FunctionCall) sobek.Value {
	message := stringArg(rt, call, 0, "hmacSHA256")
	secret := stringArg(rt, call, 1, "hmacSHA256")
	encoding, _ := optionalStringArg(rt, call, 2, "hmacSHA256")
	out, err := encodeDigest(hmacSHA256([]byte(message), []byte(secret)), encoding)
	if err != nil {
		throwType(rt, "utils.hmacSHA256: %s", err)
	}
	return rt.ToValue(out)
}

// signJWTHS256 builds a compact HS256 JWT. Claims and header are encoded by
// encoding/json (sorted keys), so a plain call yields the same token as the
// common Go JWT libraries: header {"alg":"HS256","typ":"JWT"}.
func signJWTHS256(claims map[string]any, secret string, headerExtra map[string]any) (string, error) {
	if secret == "" {
		return "", errors.New("secret must not be empty")
	}
	header := map[string]any{"alg": "HS256", "typ": "JWT"}
	for k, v := range headerExtra {
		if k == "alg" {
			return "", errors.New("the header alg is fixed to HS256")
		}
		header[k] = v
	}
	headerJSON, err := json.Marshal(header)
	if err != nil {
		return "", fmt.Errorf("header: %w", err)
	}
	claimsJSON, err := json.Marshal(claims)
	if err != nil {
		return "", fmt.Errorf("claims: %w", err)
	}
	signingInput := base64.RawURLEncoding.EncodeToString(headerJSON) + "." + base64.RawURLEncoding.EncodeToString(claimsJSON)
	sig := hmacSHA256([]byte(signingInput), []byte(secret))
	return signingInput + "." + base64.RawURLEncoding.EncodeToString(sig), nil
}

func utilJWTSignHS256(rt *sobek.Runtime, _ *hostEnv, call sobek.FunctionCall) sobek.Value {
	claims := objectArg(rt, call, 0, "jwtSignHS256")
	secret := stringArg(rt, call, 1, "jwtSignHS256")
	var extra map[string]any
	if v := call.Argument(2); !sobek.IsUndefined(v) && !sobek.IsNull(v) {
		extra = objectArg(rt, call, 2, "jwtSignHS256")
	}
	token, err := signJWTHS256(claims, secret, extra)
	if err != nil {
		throwType(rt, "utils.jwtSignHS256: %s", err)
	}
	return rt.ToValue(token)
}

// decodeBase64URL decodes URL-safe Base64 with or without padding.
func decodeBase64URL(s string) (string, error) {
	decoded, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
	if err != nil {
		return "", errors.New("invalid base64url input")
	}
	return string(decoded), nil
}
