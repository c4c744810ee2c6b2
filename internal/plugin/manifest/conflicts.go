package manifest

import "fmt"

// Conflicts is the cross-plugin pre-flight: it reports what candidate would
// take from the other installed plugins. A legacy channel type belongs to one
// plugin only, and a native route (method and path shape) is served by one
// plugin only. Protocol claims may be shared (SPEC §4.1 rule 8), so they never
// conflict. Other versions of the candidate's own key are ignored: they are
// replaced, not served alongside.
func Conflicts(candidate *Manifest, others []*Manifest) Problems {
	if candidate == nil {
		return nil
	}
	var c collector
	for i, ct := range candidate.ChannelTypes {
		if owner := channelTypeOwner(candidate.Key, ct, others); owner != nil {
			c.addf(at("meta.channelTypes", i), "channel type %d is already owned by plugin %s", ct, describe(owner))
		}
	}
	for i, r := range candidate.Routes {
		if owner := routeOwner(candidate.Key, r, others); owner != nil {
			c.addf(at("meta.routes", i), "%s %s is already served by plugin %s", r.Method, r.Path, describe(owner))
		}
	}
	return c.problems
}

func channelTypeOwner(key string, ct int, others []*Manifest) *Manifest {
	for _, o := range others {
		if o == nil || o.Key == key {
			continue
		}
		for _, t := range o.ChannelTypes {
			if t == ct {
				return o
			}
		}
	}
	return nil
}

func routeOwner(key string, r Route, others []*Manifest) *Manifest {
	shape := r.Shape()
	for _, o := range others {
		if o == nil || o.Key == key {
			continue
		}
		for _, or := range o.Routes {
			if or.Method == r.Method && or.Shape() == shape {
				return o
			}
		}
	}
	return nil
}

func describe(m *Manifest) string {
	return fmt.Sprintf("%s@%s", m.Key, m.Version)
}
