package books

// A team with billing shared pays its members' calls from its own balance
// (CONTRACT §18). Its ledger entries carry the team (and still name the
// member), its rows the team-paid marker, so its books are kept apart from
// its members' and proved the same way: ledger against rows, and the
// balance's movement against the net spend.

// payer is the books of the account an entry or a row moved: the team's
// shared balance when team is set, else the user's.
func (lr *ledgerRead) payer(user, team int64) *books {
	if team != 0 {
		return account(lr.teams, team)
	}
	return account(lr.users, user)
}

// reconcileTeams closes the books of every team whose shared balance
// moved or had rows in the window. The ledger alone explains every unit a
// team ever had (its top-ups are entries), so its balances are the
// ledger's, and a stored balance that strayed from it shows in the end.
func reconcileTeams(before, drifts map[int64]int64, lr *ledgerRead, rep *Report) {
	for _, id := range sortedIDs(lr.teams) {
		b := lr.teams[id]
		if !b.active {
			continue
		}
		rep.add(Account{TeamID: id, BalanceStart: before[id], BalanceEnd: before[id] + b.raw + drifts[id]}, b, "team")
	}
}
