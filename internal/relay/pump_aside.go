package relay

// The moments of a passed-through event that go aside (see passStep): each
// is a plain function of the step, so handing it aside allocates nothing.

// asideAt runs fn aside on the step with the event in its at fields,
// which do not keep the event's bytes once it returns.
func (p *passStep) asideAt(fn func(any), name string, data []byte) {
	p.atName, p.atData = name, data
	asideOn(fn, p)
	p.atData = nil
}

func sniffEndAside(v any) {
	p := v.(*passStep)
	p.whole = p.ends.StreamEnds(p.atName, p.atData)
}

func sniffUsageAside(v any) {
	p := v.(*passStep)
	u, ok := p.sp.SniffStreamUsage(p.atName, p.atData)
	if ok {
		p.tally.usage.Merge(u)
	}
	p.atUsageOnly = ok && p.sp.UsageOnlyEvent(p.atName, p.atData)
}

func firstTextAside(v any) {
	p := v.(*passStep)
	if len(p.sp.AppendStreamText(nil, p.atName, p.atData)) > 0 {
		p.sink.textOutHere()
	}
}
