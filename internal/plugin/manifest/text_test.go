package manifest

import (
	"maps"
	"strings"
	"testing"
)

func TestLocalizedTextNormalisation(t *testing.T) {
	description := func(want LocalizedText) func(*testing.T, *Manifest) {
		return func(t *testing.T, m *Manifest) {
			if !maps.Equal(m.Description, want) {
				t.Errorf("description = %v, want %v", m.Description, want)
			}
		}
	}
	many := obj{"en": "x"}
	for _, l := range []string{"de", "fr", "es", "it", "ja", "ko", "pt", "ru", "ar", "hi", "id", "nl", "pl", "tr", "vi", "th"} {
		many[l] = "x"
	}
	runCases(t, []ruleCase{
		{name: "string becomes English map", edit: set("description", "  Video  "), check: description(LocalizedText{"en": "Video"})},
		{name: "locale keys get BCP-47 casing", edit: set("description", obj{"EN": "a", "zh-tw": "b", "zh-hant-tw": "c", "pt_br": "d"}),
			want: []string{"meta.description.pt_br|language tag"}},
		{name: "canonical casing", edit: set("description", obj{"EN": "a", "zh-tw": "b", "zh-hant-tw": "c", "es-419": "d"}),
			check: description(LocalizedText{"en": "a", "zh-TW": "b", "zh-Hant-TW": "c", "es-419": "d"})},
		{name: "missing en", edit: set("description", obj{"zh": "视频"}), want: []string{"meta.description|English"}},
		{name: "keys equal after casing", edit: set("description", obj{"en": "a", "zh-tw": "b", "zh-TW": "c"}), want: []string{"meta.description.zh-tw|duplicates"}},
		{name: "seventeen locales", edit: set("description", many), want: []string{"meta.description|at most 16"}},
		{name: "blank value", edit: set("description", obj{"en": " "}), want: []string{"meta.description.en|empty"}},
		{name: "control character", edit: set("description", "a\nb"), want: []string{"meta.description|control"}},
		{name: "non-string value", edit: set("description", obj{"en": float64(1)}), want: []string{"meta.description.en|string"}},
		{name: "512 runes fit", edit: set("description", strings.Repeat("视", 512))},
		{name: "513 runes do not", edit: set("description", strings.Repeat("视", 513)), want: []string{"meta.description|512"}},
		{name: "array rejected", edit: set("description", arr("a")), want: []string{"meta.description|map"}},
	})
}

func TestLocalizedTextLookup(t *testing.T) {
	text := LocalizedText{"en": "English", "zh": "中文", "zh-TW": "繁體"}
	for _, tc := range []struct{ lang, want string }{
		{"zh-TW", "繁體"},
		{"zh-tw", "繁體"},
		{"zh_TW", "繁體"},
		{"zh-CN", "中文"},
		{"zh", "中文"},
		{"fr-FR", "English"},
		{"", "English"},
	} {
		if got := text.Lookup(tc.lang); got != tc.want {
			t.Errorf("Lookup(%q) = %q, want %q", tc.lang, got, tc.want)
		}
	}
}

func TestCanonicalLocale(t *testing.T) {
	for in, want := range map[string]string{
		"EN": "en", "zh-tw": "zh-TW", "zh-hant-tw": "zh-Hant-TW", "SR-LATN": "sr-Latn", "es-419": "es-419", "de-ch-1901": "de-CH-1901",
	} {
		if got := CanonicalLocale(in); got != want {
			t.Errorf("CanonicalLocale(%q) = %q, want %q", in, got, want)
		}
	}
}
