package e2e

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/testkit"
)

const (
	memberName     = "bob"
	memberPassword = "bob-password-e2e"
)

// TestTeamPagesInHeadlessChromium drives the team pages: root creates an
// organisation and a shared-billing team, tops it up and adds alice as its
// manager and bob as a member; alice (and only she) sees "My team" with
// bob, sets bob's budget and reads the team's usage, in English and
// Chinese.
func TestTeamPagesInHeadlessChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("browser tests skipped in -short mode")
	}
	bin := requireChromium(t)
	up := newFakeUpstream(t)
	gw := startGateway(t, up.URL)
	if code, _ := gw.Do(t, "POST", "/api/users", rootToken, map[string]any{"username": memberName, "password": memberPassword}); code != http.StatusCreated && code != http.StatusOK {
		t.Fatalf("creating bob: %d", code)
	}
	b := launchBrowser(t, bin)
	p := b.newPage(t)
	steps := []struct {
		name string
		run  func(p *page)
	}{
		{"root creates an organisation and a team with a manager", func(p *page) { buildTeam(p, gw) }},
		{"a member has no team page", func(p *page) { noTeamPage(p, gw) }},
		{"the manager sets a member's budget", func(p *page) { manageTeam(p, gw) }},
		{"the manager reads the team's usage", func(p *page) { teamUsage(p, gw) }},
		{"the team page in Chinese", func(p *page) {
			selectLang(p, "zh")
			p.waitFor(`document.querySelector("#nav-myteam") && document.querySelector("#nav-myteam").textContent === "我的团队"`, "the Chinese navigation")
			openPage(p, "myteam")
			p.waitFor(contains("main", "成员的密钥", "团队用量", "设置预算", memberName, "管理者"), "the team page in Chinese")
			p.screenshot("myteam-zh")
			selectLang(p, "en")
			p.waitFor(`document.querySelector("#nav-myteam").textContent === "My team"`, "back in English")
		}},
	}
	for _, s := range steps {
		if !t.Run(s.name, func(t *testing.T) { p.t = t; s.run(p) }) {
			return
		}
	}
	if probs := b.Problems(); len(probs) > 0 {
		t.Errorf("the page reported script errors: %v", probs)
	}
}

// setSelect chooses value in a select as a person's choice would.
func setSelect(p *page, selector, value string) {
	p.t.Helper()
	p.waitVisible(selector)
	js := fmt.Sprintf(`(() => { const s = document.querySelector(%q); s.value = %q; s.dispatchEvent(new Event("change", {bubbles: true})); return s.value; })()`, selector, value)
	var got string
	if err := p.eval(js, &got); err != nil || got != value {
		p.t.Fatalf("choosing %q in %s: got %q, %v", value, selector, got, err)
	}
}

func buildTeam(p *page, gw *testkit.Gateway) {
	signInAt(p, gw.URL, "root", rootPassword)
	openPage(p, "orgs")
	p.waitFor(contains("#orgs-list", "No organisations yet."), "the empty organisation list")
	p.click("#org-create")
	p.fill("dialog[open] input[name=name]", "acme")
	submitDialog(p)
	p.waitFor(contains("#orgs-list", "acme"), "the new organisation listed")
	p.click("#team-create")
	p.fill("dialog[open] input[name=name]", "core")
	setSelect(p, "dialog[open] select[name=billing]", "shared")
	submitDialog(p)
	p.waitFor(contains("#teams-list", "core", "acme", "shared team balance"), "the new team listed under its organisation")
	p.click("#teams-list button[aria-label='Change the balance of team core']")
	p.fill("dialog[open] input[name=delta]", "3")
	submitDialog(p)
	p.waitFor(`!document.querySelector("dialog[open]") && `+contains("#teams-list", "$3.00"), "the team's balance topped up")
	p.click(".team-members-open")
	p.waitFor(contains("#team-members", "No members yet."), "the team's empty member list")
	for _, m := range [][2]string{{userName, "manager"}, {memberName, "member"}} {
		p.click("#team-member-add")
		p.fill("dialog[open] input[name=user]", m[0])
		setSelect(p, "dialog[open] select[name=team_role]", m[1])
		submitDialog(p)
		p.waitFor(`!document.querySelector("dialog[open]") && `+contains("#team-members-list", m[0]), m[0]+" added")
	}
	p.waitFor(contains("#team-members-list", "manager", "member"), "both roles shown")
	p.screenshot("orgs")
	p.click("#logout")
	p.waitVisible("#login-submit")
	_, team := gw.Do(p.t, "GET", "/api/teams/1", rootToken, nil)
	if team["name"] != "core" || team["billing"] != "shared" || team["quota"].(float64) <= 0 {
		p.t.Fatalf("the team as stored: %v", team)
	}
}

func noTeamPage(p *page, gw *testkit.Gateway) {
	signInAt(p, gw.URL, memberName, memberPassword)
	p.waitVisible("#nav-dashboard")
	if p.text("#nav-myteam") != "" {
		p.t.Fatal("a plain member sees the team page in the navigation")
	}
	p.navigate(gw.URL + "/my-team")
	p.waitFor(contains("main", "This page is for a team's manager."), "the team page refused to a member")
	p.click("#logout")
	p.waitVisible("#login-submit")
}

func manageTeam(p *page, gw *testkit.Gateway) {
	signInAt(p, gw.URL, userName, userPassword)
	openPage(p, "myteam")
	p.waitFor(contains("#myteam-members", userName, memberName, "manager")+" && "+contains("#myteam-keys", "alice-key")+" && "+contains("#myteam-balance", "$3.00"), "the team's members, keys and balance")
	if n := p.waitText(`String(document.querySelectorAll(".myteam-budget").length)`, "the budget buttons"); n != "1" {
		p.t.Fatalf("%s budget buttons, want one (the manager does not set its own)", n)
	}
	p.click(".myteam-budget")
	p.fill("dialog[open] input[name=period_quota]", "5")
	setSelect(p, "dialog[open] select[name=period]", "day")
	submitDialog(p)
	p.waitFor(`!document.querySelector("dialog[open]") && `+contains("#myteam-members", "$5.00", "per day"), "bob's budget shown")
	p.screenshot("myteam")
	_, users := gw.Do(p.t, "GET", "/api/users?page_size=100", rootToken, nil)
	for _, u := range users["items"].([]any) {
		if m := u.(map[string]any); m["username"] == memberName && (m["period"] != "day" || m["period_quota"].(float64) <= 0) {
			p.t.Fatalf("bob's budget as stored: %v per %v", m["period_quota"], m["period"])
		}
	}
}

func teamUsage(p *page, gw *testkit.Gateway) {
	aliceChats(p, gw)
	openPage(p, "myteam")
	p.waitFor(`document.querySelector("#myteam-usage table")`, "the usage table")
	p.click("#myteam-usage-show")
	p.waitFor(contains("#myteam-usage", userName), "the call grouped by user")
	setSelect(p, "select[name=group_by]", "model")
	p.click("#myteam-usage-show")
	p.waitFor(contains("#myteam-usage", chatModel), "the call grouped by model")
}
