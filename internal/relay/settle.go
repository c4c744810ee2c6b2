package relay

// settle charges what was consumed and writes the consume row. It runs even
// when the client went away mid-answer. A charge that cannot be priced
// (quantities past every bound) keeps the reservation, which admission
// priced, rather than a wrong figure.
func (c *callCore) settle(ch charge) {
	if c.hold == nil && c.line == nil {
		return
	}
	amount, err := c.quota(ch)
	if err != nil {
		c.rl.Logger.ErrorContext(c.r.Context(), "answer could not be priced; charging the reservation", "surface", c.name, "model", c.model, "err", err)
		amount = c.reserved()
	}
	c.settleAt(ch, amount)
}

// settleAt settles the hold at amount, with ch's usage in the row.
func (c *callCore) settleAt(ch charge, amount int64) {
	if c.line != nil {
		c.settleLine(ch, amount)
		return
	}
	c.rl.Metrics.settled(c.metricModel(), c.metricChannel(), ch.usage, amount)
	if c.rl.Tracer.On() {
		c.traceUsage(ch.usage)
	}
	c.ticket.Settle(c.background(), c.hold, amount, c.logRow(ch, true), int64(ch.usage.InputTokens)+int64(ch.usage.OutputTokens))
	if c.rl.OnSettle != nil && amount > 0 {
		c.rl.OnSettle(c.principal.UserID, c.principal.TokenID)
	}
}
