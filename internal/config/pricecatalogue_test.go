package config

import (
	"strings"
	"testing"
)

func TestPriceCatalogueFromTheFileAndTheEnvironment(t *testing.T) {
	cases := []struct {
		name string
		yaml string
		env  map[string]string
		want PriceCatalogue
		err  string
	}{
		{name: "off by default", yaml: "listen: \":1\"\n"},
		{name: "from the file", yaml: "price_catalogue: {url: \"https://c.example/p.json\", interval_hours: 24}\n",
			want: PriceCatalogue{URL: "https://c.example/p.json", IntervalHours: 24}},
		{name: "the environment wins", yaml: "price_catalogue: {url: \"https://c.example/p.json\", interval_hours: 24}\n",
			env:  map[string]string{"TURNPIKE_PRICE_CATALOGUE_INTERVAL_HOURS": "0.5", "TURNPIKE_PRICE_CATALOGUE_MAX_CHANGE_RATIO": "4"},
			want: PriceCatalogue{URL: "https://c.example/p.json", IntervalHours: 0.5, MaxChangeRatio: 4}},
		{name: "an address that is not http(s)", yaml: "price_catalogue: {url: \"ftp://c.example/p\", interval_hours: 1}\n", err: "price_catalogue.url"},
		{name: "no interval", yaml: "price_catalogue: {url: \"https://c.example/p.json\"}\n", err: "price_catalogue.interval_hours"},
		{name: "a ratio of one", yaml: "price_catalogue: {url: \"https://c.example/p.json\", interval_hours: 1, max_change_ratio: 1}\n", err: "max_change_ratio"},
		{name: "an unknown member", yaml: "price_catalogue: {url: \"https://c.example/p.json\", every: 1}\n", err: "every"},
		{name: "a bad number in the environment", yaml: "listen: \":1\"\n", env: map[string]string{"TURNPIKE_PRICE_CATALOGUE_INTERVAL_HOURS": "daily"},
			err: "TURNPIKE_PRICE_CATALOGUE_INTERVAL_HOURS"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Load(writeFile(t, tc.yaml), env(tc.env))
			if err == nil {
				err = c.Validate()
			}
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one naming %s", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.PriceCatalogue != tc.want {
				t.Fatalf("got %+v, want %+v", c.PriceCatalogue, tc.want)
			}
		})
	}
}
