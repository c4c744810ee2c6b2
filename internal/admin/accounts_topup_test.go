package admin

import (
	"encoding/json"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/config"
)

func TestPaidCentsConvertToQuotaRoundingHalfUpOnce(t *testing.T) {
	cases := []struct {
		cents, perUSD, want int64
	}{
		{1250, 500000, 6250000},
		{1, 500000, 5000},
		{50, 1, 1},  // 0.50 quota rounds up
		{49, 1, 0},  // 0.49 rounds down: nothing to credit
		{150, 3, 5}, // 4.5 rounds up
		{1 << 62, 500000, 0},
	}
	for _, tc := range cases {
		if got := centsToQuota(tc.cents, tc.perUSD); got != tc.want {
			t.Errorf("centsToQuota(%d, %d) = %d, want %d", tc.cents, tc.perUSD, got, tc.want)
		}
	}
}

func TestTopUpAmountsAreWholeCentsWithinTheBounds(t *testing.T) {
	s := config.Payments{Currency: "usd", MinUSD: 1, MaxUSD: 1000}
	cases := []struct {
		raw   string
		cents int64
		ok    bool
	}{
		{`1`, 100, true}, {`1000`, 100000, true}, {`19.99`, 1999, true}, {`2.5e1`, 2500, true}, {`10.10`, 1010, true},
		{`0.99`, 0, false}, {`1000.01`, 0, false}, {`1.001`, 0, false}, {`-5`, 0, false},
		{`"10"`, 0, false}, {`null`, 0, false}, {`true`, 0, false}, {`1e400`, 0, false}, {``, 0, false},
	}
	for _, tc := range cases {
		cents, err := topUpCents(json.RawMessage(tc.raw), s)
		if tc.ok != (err == nil) || cents != tc.cents {
			t.Errorf("%s: %d %v", tc.raw, cents, err)
		}
	}
}
