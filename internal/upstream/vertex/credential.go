package vertex

import (
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/url"
	"strings"
	"unicode"

	"github.com/turnpike-gw/turnpike/internal/upstream"
)

// defaultTokenURI is Google's token endpoint, for a service-account key
// that names none (Google's own key files always name it).
const defaultTokenURI = "https://oauth2.googleapis.com/token"

// credential is a channel key as Vertex AI takes it: a service account
// (the gateway exchanges a signed JWT for an access token) or, when account
// is nil, an API key of express mode.
type credential struct {
	apiKey  string
	account *serviceAccount
}

// serviceAccount is the part of a Google service-account key file the
// token exchange needs.
type serviceAccount struct {
	Type         string `json:"type"`
	ProjectID    string `json:"project_id"`
	PrivateKeyID string `json:"private_key_id"`
	PrivateKey   string `json:"private_key"`
	ClientEmail  string `json:"client_email"`
	TokenURI     string `json:"token_uri"`
	// Scope is an OAuth scope other than Vertex AI's, for task plugins
	// whose vendor takes a Google-style JWT grant for its own API.
	Scope string `json:"scope"`
}

// keyError refuses a channel key; its message says what is wrong and never
// quotes any of the key.
func keyError(format string, args ...any) error {
	return upstream.SettingErrorf("key", format, args...)
}

// parseKey reads a channel key. Text that starts with "{" is a
// service-account key file; anything else is an express-mode API key.
// Errors are *upstream.SettingError on "key".
func parseKey(key string) (credential, error) {
	k := strings.TrimSpace(key)
	if k == "" {
		return credential{}, keyError("is required: paste the service account's JSON key file, or an API key for Vertex AI express mode")
	}
	if !strings.HasPrefix(k, "{") {
		if strings.IndexFunc(k, unicode.IsSpace) >= 0 {
			return credential{}, keyError("must be one API key without spaces, or a service account's JSON key file")
		}
		return credential{apiKey: k}, nil
	}
	var sa serviceAccount
	if err := json.Unmarshal([]byte(k), &sa); err != nil {
		return credential{}, keyError("is not a readable service account JSON key: paste the key file Google Cloud gave you, whole and unchanged")
	}
	if sa.Type != "" && sa.Type != "service_account" {
		return credential{}, keyError("is a Google credential of another type: only a service account key (\"type\": \"service_account\") or an API key is accepted")
	}
	if strings.TrimSpace(sa.ClientEmail) == "" {
		return credential{}, keyError("is not usable: the service account JSON has no client_email")
	}
	if strings.TrimSpace(sa.PrivateKey) == "" {
		return credential{}, keyError("is not usable: the service account JSON has no private_key")
	}
	if err := checkPrivateKey(sa.PrivateKey); err != nil {
		return credential{}, err
	}
	if sa.TokenURI == "" {
		sa.TokenURI = defaultTokenURI
	} else if !httpURL(sa.TokenURI) {
		return credential{}, keyError("is not usable: the service account JSON's token_uri must be an http or https URL")
	}
	return credential{account: &sa}, nil
}

// checkPrivateKey accepts a PEM RSA private key in PKCS #8 (Google's form)
// or PKCS #1.
func checkPrivateKey(s string) error {
	block, _ := pem.Decode([]byte(s))
	if block == nil {
		return keyError("is not usable: the service account JSON's private_key is not a PEM private key")
	}
	if k, err := x509.ParsePKCS8PrivateKey(block.Bytes); err == nil {
		if _, ok := k.(*rsa.PrivateKey); ok {
			return nil
		}
		return keyError("is not usable: the service account JSON's private_key is not an RSA key")
	}
	if _, err := x509.ParsePKCS1PrivateKey(block.Bytes); err == nil {
		return nil
	}
	return keyError("is not usable: the service account JSON's private_key cannot be read as an RSA private key")
}

func httpURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" && u.User == nil
}
