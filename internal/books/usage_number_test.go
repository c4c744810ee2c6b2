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
