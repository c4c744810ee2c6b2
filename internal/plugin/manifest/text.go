package manifest

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// LocalizedText maps canonical BCP-47 language tags to text; it always holds
// "en" once validated.
type LocalizedText map[string]string

// Limits of LocalizedText values.
const (
	maxLocales          = 16
	maxDescriptionRunes = 512
	maxUsageTextRunes   = 256
	defaultLocale       = "en"
)

var localePattern = regexp.MustCompile(`^[a-zA-Z]{2,3}(-[a-zA-Z0-9]{2,8})*$`)

// CanonicalLocale returns the BCP-47 casing of a tag: language lower case,
// four-letter script title case, two-letter region upper case, anything else
// lower case (zh-hant-tw → zh-Hant-TW). Underscores are read as hyphens.
func CanonicalLocale(tag string) string {
	parts := strings.Split(strings.ReplaceAll(tag, "_", "-"), "-")
	for i, p := range parts {
		switch {
		case i == 0:
			parts[i] = strings.ToLower(p)
		case len(p) == 2 && isAlpha(p):
			parts[i] = strings.ToUpper(p)
		case len(p) == 4 && isAlpha(p):
			parts[i] = strings.ToUpper(p[:1]) + strings.ToLower(p[1:])
		default:
			parts[i] = strings.ToLower(p)
		}
	}
	return strings.Join(parts, "-")
}

func isAlpha(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i] | 0x20
		if c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

// Lookup picks the text for lang: the exact tag, then its primary language,
// then English. It returns "" only for an empty text.
func (t LocalizedText) Lookup(lang string) string {
	if lang != "" {
		tag := CanonicalLocale(lang)
		if s, ok := t[tag]; ok {
			return s
		}
		primary, _, _ := strings.Cut(tag, "-")
		if s, ok := t[primary]; ok {
			return s
		}
	}
	return t[defaultLocale]
}

// localizedText validates a LocalizedText value: a string becomes an English
// map; a map needs "en", at most 16 well-formed locale keys and clean values.
func (v *validator) localizedText(path string, value any, maxRunes int) (LocalizedText, bool) {
	if s, ok := value.(string); ok {
		text, ok := v.textValue(path, s, maxRunes)
		if !ok {
			return nil, false
		}
		return LocalizedText{defaultLocale: text}, true
	}
	obj, ok := objectOf(value)
	if !ok {
		v.addf(path, "must be a string or a map of language tags to strings, got %s", kindOf(value))
		return nil, false
	}
	start := v.count()
	if len(obj) > maxLocales {
		v.addf(path, "has %d languages; at most %d are allowed", len(obj), maxLocales)
	}
	out := LocalizedText{}
	for _, key := range sortedKeys(obj) {
		keyPath := dot(path, key)
		if !localePattern.MatchString(key) {
			v.addf(keyPath, "is not a language tag like en, zh or zh-TW")
			continue
		}
		tag := CanonicalLocale(key)
		if _, dup := out[tag]; dup {
			v.addf(keyPath, "duplicates language %s", tag)
			continue
		}
		s, isString := obj[key].(string)
		if !isString {
			v.addf(keyPath, "must be a string, got %s", kindOf(obj[key]))
			continue
		}
		if text, ok := v.textValue(keyPath, s, maxRunes); ok {
			out[tag] = text
		}
	}
	if _, hasEnglish := out[defaultLocale]; !hasEnglish && !hasLocaleKey(obj, defaultLocale) {
		v.addf(path, "must contain an English (en) text")
	}
	return out, v.count() == start
}

func hasLocaleKey(obj map[string]any, tag string) bool {
	for k := range obj {
		if localePattern.MatchString(k) && CanonicalLocale(k) == tag {
			return true
		}
	}
	return false
}

// requiredText trims a required plain text (meta.name, author.name): only
// an empty one is refused, as a required field left blank. SPEC.md sets no
// length or character rules for these, so none are added.
func (v *validator) requiredText(path, s string) (string, bool) {
	text := strings.TrimSpace(s)
	if text == "" {
		v.addf(path, "must not be empty")
		return "", false
	}
	return text, true
}

// textValue trims a display text and checks it is non-empty, free of control
// characters and within maxRunes.
func (v *validator) textValue(path, s string, maxRunes int) (string, bool) {
	text := strings.TrimSpace(s)
	switch {
	case text == "":
		v.addf(path, "must not be empty")
	case hasControl(text):
		v.addf(path, "must not contain control characters")
	case maxRunes > 0 && utf8.RuneCountInString(text) > maxRunes:
		v.addf(path, "is longer than %d characters", maxRunes)
	default:
		return text, true
	}
	return "", false
}
