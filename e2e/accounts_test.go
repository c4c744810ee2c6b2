package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"

	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/testkit"
)

// TestAccountPagesInHeadlessChromium drives the accounts pages: sign up,
// switch the console to Chinese and back (remembered across a reload),
// set up two-factor sign-in from the QR page and sign in with a code,
// redeem a code, and as root make redemption codes (in dollars) and read
// the audit log.
func TestAccountPagesInHeadlessChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("browser tests skipped in -short mode")
	}
	bin := requireChromium(t)
	gw := testkit.Start(t, testkit.WithRootPassword(rootPassword), testkit.WithRootToken(rootToken),
		testkit.WithConfig(func(c *config.Config) {
			c.LogLevel = "warn"
			c.Registration = config.Registration{Enabled: true, InitialQuota: 250_000}
		}))
	b := launchBrowser(t, bin)
	p := b.newPage(t)
	acct := &accountScenario{gw: gw}
	steps := []struct {
		name string
		run  func(p *page)
	}{
		{"sign up", acct.signUp},
		{"switch to Chinese and back", acct.language},
		{"set up two-factor sign-in", acct.twoFactor},
		{"sign in with a code", acct.signInWithCode},
		{"redeem a code", acct.redeem},
		{"make redemption codes as root", acct.makeCodes},
		{"read the audit log", acct.audit},
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

type accountScenario struct {
	gw     *testkit.Gateway
	secret string
}

const (
	signupName     = "newcomer"
	signupPassword = "newcomer-password"
)

func (s *accountScenario) signUp(p *page) {
	p.navigate(s.gw.URL + "/login")
	p.waitVisible("#to-signup")
	p.click("#to-signup")
	p.waitVisible("#signup-submit")
	p.fill("input[name=username]", signupName)
	p.fill("input[name=password]", signupPassword)
	p.fill("input[name=confirm]", "something-else")
	p.click("#signup-submit")
	p.waitFor(`document.querySelector("[aria-invalid=true]")`, "the mismatch message")
	p.fill("input[name=confirm]", signupPassword)
	p.screenshot("signup")
	p.click("#signup-submit")
	p.waitVisible("#whoami")
	p.waitFor(`document.querySelector("#stat-quota") && document.querySelector("#stat-quota").textContent.includes("$0.50")`, "the initial quota in dollars")
}

func selectLang(p *page, lang string) {
	p.t.Helper()
	if err := p.eval(fmt.Sprintf(`(() => { const s = document.querySelector("#lang-switch"); s.value = %q; s.dispatchEvent(new Event("change")); })()`, lang), nil); err != nil {
		p.t.Fatal(err)
	}
}

func (s *accountScenario) language(p *page) {
	selectLang(p, "zh")
	p.waitFor(`document.querySelector("#nav-dashboard") && document.querySelector("#nav-dashboard").textContent === "仪表盘"`, "the Chinese navigation")
	p.waitVisible("#stat-quota")
	p.screenshot("dashboard-zh")
	p.navigate(s.gw.URL + "/account")
	p.waitFor(`document.querySelector("#nav-account") && document.querySelector("#nav-account").textContent === "账户与安全"`, "the language remembered after a reload")
	selectLang(p, "en")
	p.waitFor(`document.querySelector("#nav-dashboard").textContent === "Dashboard"`, "the English navigation")
}

func (s *accountScenario) twoFactor(p *page) {
	openPage(p, "account")
	p.waitVisible("#tfa-start")
	p.click("#tfa-start")
	p.waitFor(`document.querySelector("#tfa-qr") && document.querySelector("#tfa-qr").naturalWidth > 0`, "the QR code")
	s.secret = p.text("#tfa-secret")
	p.screenshot("account-2fa-setup")
	p.fill("#tfa-enable input[name=code]", "000000")
	p.click("#tfa-enable button[type=submit]")
	p.waitFor(`document.querySelector("#tfa-enable [role=alert]").textContent.length > 0`, "the wrong-code refusal")
	p.fill("#tfa-enable input[name=code]", s.code(p))
	p.click("#tfa-enable button[type=submit]")
	p.waitFor(`document.querySelectorAll("#recovery-codes li").length === 10`, "ten recovery codes")
	p.screenshot("account-2fa-recovery")
	p.click("dialog[open] .dialog-actions button")
	p.waitFor(`document.querySelector("#tfa-state") && document.querySelector("#tfa-state").textContent.includes("is on")`, "two-factor sign-in on")
	p.screenshot("account")
}

func (s *accountScenario) code(p *page) string {
	c, err := totp.GenerateCodeCustom(s.secret, time.Now(), totp.ValidateOpts{Period: 30, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
	if err != nil {
		p.t.Fatal(err)
	}
	return c
}

func (s *accountScenario) signInWithCode(p *page) {
	p.click("#logout")
	p.waitVisible("#login-submit")
	p.fill("input[name=username]", signupName)
	p.fill("input[name=password]", signupPassword)
	p.click("#login-submit")
	p.waitVisible("input[name=code]")
	p.fill("input[name=code]", s.code(p))
	p.screenshot("login-2fa")
	p.click("#login-submit")
	p.waitVisible("#whoami")
}

func (s *accountScenario) redeem(p *page) {
	var made struct {
		Codes []string `json:"codes"`
	}
	rootAPI(p.t, s.gw, "POST", "/api/redemptions", map[string]any{"quota": 1_000_000, "count": 1, "name": "welcome"}, &made)
	openPage(p, "account")
	p.fill("#redeem input[name=code]", made.Codes[0])
	p.click("#redeem-submit")
	p.waitFor(`document.querySelector("#account-balance").textContent.includes("$2.50")`, "the balance after redeeming")
	p.screenshot("account-redeemed")
}

func (s *accountScenario) makeCodes(p *page) {
	p.click("#logout")
	p.waitVisible("#login-submit")
	p.fill("input[name=username]", "root")
	p.fill("input[name=password]", rootPassword)
	p.click("#login-submit")
	p.waitVisible("#whoami")
	openPage(p, "redemptions")
	p.click("#redemptions-create")
	p.waitVisible("dialog[open] input[name=amount]")
	p.fill("dialog[open] input[name=name]", "promo")
	p.fill("dialog[open] input[name=amount]", "5")
	p.fill("dialog[open] input[name=count]", "3")
	submitDialog(p)
	p.waitFor(`document.querySelectorAll("#new-codes li").length === 3`, "three new codes")
	codes := p.text("#new-codes")
	p.screenshot("redemptions-created")
	p.click("dialog[open] .dialog-actions button.primary")
	p.waitFor(`!document.querySelector("dialog[open]")`, "the dialog to close")
	p.waitFor(contains("#redemptions-list", "$5.00"), "codes worth five dollars")
	list := p.text("#redemptions-list")
	first := strings.Fields(codes)[0]
	if strings.Contains(list, first) || !strings.Contains(list, "used") {
		p.t.Fatalf("the list should mask codes and show the used one: %q", list)
	}
	p.screenshot("redemptions")
}

func (s *accountScenario) audit(p *page) {
	openPage(p, "audit")
	p.waitFor(contains("#audit-list", "/api/redemptions"), "the code creation in the audit log")
	p.waitFor(contains("#audit-list", signupName), "the new user's calls")
	p.screenshot("audit")
}
