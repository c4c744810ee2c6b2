package books

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

func TestPicoNumberWritesWhatTheExactDivisionWrites(t *testing.T) {
	values := []*big.Int{big.NewInt(0), big.NewInt(1), big.NewInt(-1), big.NewInt(1_000_000_000_000), big.NewInt(-2_500_000_000_000),
		big.NewInt(120_000_000_000), big.NewInt(-987_654_321), big.NewInt(math.MaxInt64), big.NewInt(math.MinInt64),
		new(big.Int).Mul(big.NewInt(math.MaxInt64), big.NewInt(1000)), new(big.Int).Neg(new(big.Int).Lsh(big.NewInt(1), 70))}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		values = append(values, big.NewInt(r.Int64N(1<<50)-1<<49), big.NewInt(r.Int64N(100)*10_000_000_000))
	}
	for _, v := range values {
		if got, want := picoNumber(v), number(picoUSD(v)); got != want {
			t.Fatalf("picoNumber(%s) = %s, the exact division writes %s", v, got, want)
		}
	}
}

func TestPicoSumAddsAsExactlyAsABigInt(t *testing.T) {
	huge := new(big.Int).Lsh(big.NewInt(1), 70)
	cases := []struct {
		name string
		adds []int64 // a negative entry is that amount taken away (a refund)
		big  []*big.Int
	}{
		{name: "small amounts", adds: []int64{5, 12, -3, 0}},
		{name: "up to the largest int64", adds: []int64{math.MaxInt64 - 10, 10}},
		{name: "past the largest int64", adds: []int64{math.MaxInt64 - 10, 11, 7}},
		{name: "below the smallest int64", adds: []int64{-math.MaxInt64, -5, 3}},
		{name: "back into an int64 after outgrowing it", adds: []int64{math.MaxInt64, math.MaxInt64, -math.MaxInt64}},
		{name: "a line beyond an int64", adds: []int64{7}, big: []*big.Int{huge, new(big.Int).Neg(huge)}},
		{name: "the smallest int64 taken away", big: []*big.Int{big.NewInt(math.MinInt64)}},
	}
	for _, c := range cases {
		var p picoSum
		want := new(big.Int)
		for _, a := range c.adds {
			v := big.NewInt(a)
			neg := a < 0
			if neg {
				v.Neg(v)
				want.Sub(want, v)
			} else {
				want.Add(want, v)
			}
			p.add(v, neg)
		}
		for _, v := range c.big {
			p.add(v, true)
			want.Sub(want, v)
		}
		if got := p.number(); got != picoNumber(want) {
			t.Errorf("%s: %s, want %s", c.name, got, picoNumber(want))
		}
	}
}
