package bedrock

import (
	"strings"
	"unicode"

	"github.com/turnpike-gw/turnpike/internal/upstream"
)

// Validate refuses a channel whose requests could not be addressed or
// signed: no region or one that is not a region name, a key that is
// neither ACCESS_KEY_ID|SECRET_ACCESS_KEY nor an API key, a session token
// that is not text. Messages never repeat the key.
func (Adapter) Validate(t upstream.Target) error {
	r, ok := t.Settings["region"]
	region, isString := r.(string)
	region = strings.TrimSpace(region)
	switch {
	case !ok || r == nil || (isString && region == ""):
		return upstream.SettingErrorf("settings.region", "is required for Amazon Bedrock, such as us-east-1")
	case !isString:
		return upstream.SettingErrorf("settings.region", "must be a string, such as us-east-1")
	case !regionPattern.MatchString(region):
		return upstream.SettingErrorf("settings.region", "%q is not an AWS region name such as us-east-1", region)
	case region != r.(string):
		return upstream.SettingErrorf("settings.region", "must not have spaces around it")
	}
	if v, ok := t.Settings["session_token"]; ok && v != nil {
		if _, isString := v.(string); !isString {
			return upstream.SettingErrorf("settings.session_token", "must be a string (the temporary credentials' session token)")
		}
	}
	return validateKey(strings.TrimSpace(t.Key))
}

func validateKey(key string) error {
	if key == "" {
		return upstream.SettingErrorf("key", "is required: ACCESS_KEY_ID|SECRET_ACCESS_KEY, or an Amazon Bedrock API key")
	}
	access, secret, pair := strings.Cut(key, "|")
	if !pair {
		if hasSpace(key) {
			return upstream.SettingErrorf("key", "must be ACCESS_KEY_ID|SECRET_ACCESS_KEY or an Amazon Bedrock API key; an API key has no spaces")
		}
		return nil
	}
	access, secret = strings.TrimSpace(access), strings.TrimSpace(secret)
	switch {
	case access == "" || secret == "":
		return upstream.SettingErrorf("key", "must be ACCESS_KEY_ID|SECRET_ACCESS_KEY with both parts filled in")
	case strings.Contains(secret, "|"):
		return upstream.SettingErrorf("key", "must be ACCESS_KEY_ID|SECRET_ACCESS_KEY with a single |; a session token goes into settings.session_token")
	case hasSpace(access) || hasSpace(secret):
		return upstream.SettingErrorf("key", "must be ACCESS_KEY_ID|SECRET_ACCESS_KEY; neither part may hold spaces")
	}
	return nil
}

func hasSpace(s string) bool { return strings.IndexFunc(s, unicode.IsSpace) >= 0 }
