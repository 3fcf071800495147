// heartbeat_lag_base: the compute loop of heartbeat_lag.go alone, the baseline for the slowdown.
package main

import (
	"fmt"
	"math"
)

const n = 5000000

func fixed3(s float64) string {
	k := int64(s * 1000)
	return fmt.Sprintf("%d.%03d", k/1000, k%1000)
}

func compute(n int) float64 {
	s := 0.0
	for i := 0; i < n; i++ {
		x := float64(i) * 0.001
		s += math.Sin(x)*math.Cos(x) + math.Sqrt(math.Abs(x))
	}
	return s
}

func main() {
	fmt.Println(fixed3(compute(n)))
}
