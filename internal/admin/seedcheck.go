package admin

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/upstream"
)

// UserExists answers whether the database holds a user by name; config
// check passes a read-only lookup.
type UserExists func(ctx context.Context, username string) (bool, error)

// CheckSeed lists every seed entry that Seed would refuse, with the same
// rules (and the same functions) the start applies, each with its line in
// the file. It writes nothing. A key names a user that must be in the file
// or, when exists is given, in the database.
func CheckSeed(ctx context.Context, s config.Seed, lines config.Lines, exists UserExists) []string {
	var out []string
	inFile := map[string]bool{}
	for i, su := range s.Users {
		inFile[su.Username] = true
		if su.Role != "" && roleRank(su.Role) == 0 {
			out = append(out, lines.At(fmt.Sprintf("users[%d]", i), fmt.Sprintf("user %s: unknown role %q (user, admin or root)", su.Username, su.Role)))
		}
		if su.Quota < 0 {
			out = append(out, lines.At(fmt.Sprintf("users[%d]", i), fmt.Sprintf("user %s: quota must not be negative", su.Username)))
		}
	}
	for i, st := range s.Tokens {
		at := fmt.Sprintf("tokens[%d]", i)
		if st.Quota != nil && *st.Quota < -1 {
			out = append(out, lines.At(at, fmt.Sprintf("key %s: quota must be -1 (unlimited) or non-negative", st.Name)))
		}
		if _, err := seedLogContent(st.LogContent); err != nil {
			out = append(out, lines.At(at+".log_content", fmt.Sprintf("key %s: %v", st.Name, err)))
		}
		if st.User == "" || inFile[st.User] {
			continue
		}
		found := false
		if exists != nil {
			ok, err := exists(ctx, st.User)
			if err != nil {
				out = append(out, lines.At(at, fmt.Sprintf("key %s: user %s could not be looked up: %v", st.Name, st.User, err)))
				continue
			}
			found = ok
		}
		if !found {
			out = append(out, lines.At(at, fmt.Sprintf("key %s: user %s does not exist (not in the file's users nor in the database)", st.Name, st.User)))
		}
	}
	out = append(out, checkSeedChannels(s.Channels, lines)...)
	for _, name := range slices.Sorted(maps.Keys(s.Models)) {
		if _, err := priceFromSeed(name, s.Models[name]); err != nil {
			out = append(out, lines.At("models."+name, fmt.Sprintf("model %s: %v", name, err)))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(s.Groups)) {
		if s.Groups[name] < 0 {
			out = append(out, lines.At("groups."+name, fmt.Sprintf("group %s: ratio must not be negative", name)))
		}
		if _, err := seedLogContent(s.GroupContent[name]); err != nil {
			out = append(out, lines.At("groups."+name+".log_content", fmt.Sprintf("group %s: %v", name, err)))
		}
	}
	return out
}

// checkSeedChannels lists the seed's channels that serve would refuse. The
// provider checks need the task plugins serve loads; the protocol setting
// does not.
func checkSeedChannels(channels []config.SeedChannel, lines config.Lines) []string {
	var out []string
	for i, sc := range channels {
		c, err := channelFromSeed(sc)
		if err == nil {
			err = upstream.ValidateHTTP2(upstream.Target{BaseURL: c.BaseURL, Settings: c.Settings})
		}
		if err != nil {
			out = append(out, lines.At(fmt.Sprintf("channels[%d]", i), fmt.Sprintf("channel %s: %v", sc.Name, err)))
		}
	}
	return out
}
