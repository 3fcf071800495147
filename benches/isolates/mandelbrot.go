// Mandelbrot beside mandelbrot.csp: the same grid and iterations, counted
// serially, then over the same row chunks (2 per worker, 2 workers) in one
// goroutine each. Run with GOMAXPROCS=2 and =1 (benches/isolates/cpu.sh).
// Usage: mandelbrot [N]
package main

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"
)

// rows counts the points of rows from..to (excluded) that stay bounded.
// The float64 conversions keep the compiler from fusing a multiply and an
// add (the Go spec allows it), so the arithmetic is csp's exactly.
func rows(n, from, to int) int {
	count := 0
	for y := from; y < to; y++ {
		ci := float64(2.0*float64(y)/float64(n)) - 1.0
		for x := 0; x < n; x++ {
			cr := float64(2.0*float64(x)/float64(n)) - 1.5
			zr, zi := 0.0, 0.0
			inside := 1
			for k := 0; k < 50; k++ {
				zr2 := float64(zr * zr)
				zi2 := float64(zi * zi)
				if zr2+zi2 > 4.0 {
					inside = 0
					break
				}
				zi = float64(2.0*zr*zi) + ci
				zr = zr2 - zi2 + cr
			}
			count += inside
		}
	}
	return count
}

func main() {
	n := 1200
	if len(os.Args) > 1 {
		n, _ = strconv.Atoi(os.Args[1])
	}
	const parts = 2 * 2
	t0 := time.Now()
	serial := rows(n, 0, n)
	t1 := time.Now()
	var counts [parts]int
	var wg sync.WaitGroup
	for i := 0; i < parts; i++ {
		wg.Add(1)
		go func(i int) { defer wg.Done(); counts[i] = rows(n, n*i/parts, n*(i+1)/parts) }(i)
	}
	wg.Wait()
	parallel := 0
	for _, c := range counts {
		parallel += c
	}
	t2 := time.Now()
	if serial != parallel {
		fmt.Printf("counts differ: %d %d\n", serial, parallel)
		os.Exit(1)
	}
	s, p := t1.Sub(t0), t2.Sub(t1)
	fmt.Printf("mandelbrot %d: %d points, serial %d ms, parallel %d ms, ratio %.3f\n", n, serial, s.Milliseconds(), p.Milliseconds(), float64(p)/float64(s))
}
