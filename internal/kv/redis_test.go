package kv

import (
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

func TestRedisAddressForms(t *testing.T) {
	cases := []struct {
		url  string
		want string // client type
		err  string
	}{
		{"redis://127.0.0.1:6379/0", "*redis.Client", ""},
		{"rediss://user:pw@cache.example:6380/2", "*redis.Client", ""},
		{"redis+sentinel://:pw@s1:26379/0?master_name=mymaster&addr=s2:26379", "*redis.Client", ""},
		{"rediss+sentinel://s1:26379?master_name=m", "*redis.Client", ""},
		{"redis+cluster://n1:6379?addr=n2:6379&addr=n3:6379", "*redis.ClusterClient", ""},
		{"redis+sentinel://s1:26379/0", "", "master_name"},
		{"memcached://x:1", "", "unknown scheme"},
		{"localhost:6379", "", "want redis://"},
		{"redis://:secret@h:1/0?bogus=1", "", "xxxxx"},
	}
	for _, c := range cases {
		rdb, _, err := Open(c.url)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || strings.Contains(err.Error(), "secret") {
				t.Errorf("%s: err %v, want one mentioning %q (and no password)", c.url, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.url, err)
			continue
		}
		got := "*redis.Client"
		if _, ok := rdb.(*redis.ClusterClient); ok {
			got = "*redis.ClusterClient"
		}
		if got != c.want {
			t.Errorf("%s: %s, want %s", c.url, got, c.want)
		}
		rdb.Close()
	}
}
