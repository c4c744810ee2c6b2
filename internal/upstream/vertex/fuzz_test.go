package vertex

import (
	"errors"
	"strings"
	"testing"
	"unicode"

	"github.com/turnpike-gw/turnpike/internal/upstream"
)

// FuzzServiceAccountKey feeds arbitrary channel keys to the key reader: it
// never panics, a key it accepts is usable (an API key without spaces, or
// a service account with an email, a private key and an http(s) token
// endpoint), and a key it refuses is refused on "key" by a message that
// repeats none of it.
func FuzzServiceAccountKey(f *testing.F) {
	_, pemKey := newRSAKey(f)
	f.Add(`{"type":"service_account","project_id":"p","private_key":` + jsonString(pemKey) + `,"client_email":"a@p.iam","token_uri":"https://oauth2.googleapis.com/token"}`)
	f.Add(`{"type":"service_account","private_key":"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n","client_email":"a@b"}`)
	f.Add(`{"client_email":"a@b","private_key":` + jsonString(pemKey) + `,"token_uri":"ftp://x"}`)
	f.Add(`{"type":"authorized_user"}`)
	f.Add(`{}`)
	f.Add(`{"private_key":5}`)
	f.Add("AQ.Ab8RN6Lexpress")
	f.Add("two keys")
	f.Add("")
	f.Fuzz(func(t *testing.T, key string) {
		cred, err := parseKey(key)
		if err != nil {
			var se *upstream.SettingError
			if !errors.As(err, &se) || se.Field != "key" {
				t.Fatalf("refused with %v, not a SettingError on key", err)
			}
			if strings.Contains(se.Message, "@") || strings.Contains(se.Message, "-----") {
				t.Fatalf("the message repeats part of the key: %q", se.Message)
			}
			return
		}
		if sa := cred.account; sa != nil {
			if strings.TrimSpace(sa.ClientEmail) == "" || checkPrivateKey(sa.PrivateKey) != nil || !httpURL(sa.TokenURI) {
				t.Fatalf("accepted an unusable service account: %+v", sa)
			}
			return
		}
		if cred.apiKey == "" || strings.IndexFunc(cred.apiKey, unicode.IsSpace) >= 0 || strings.HasPrefix(cred.apiKey, "{") {
			t.Fatalf("accepted %q as an API key", cred.apiKey)
		}
	})
}
