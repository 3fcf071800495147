// Spectral-norm beside spectral_norm.csp: the same algorithm and N, run
// serially, then with every matrix-vector product split over the same row
// chunks (one per worker, 2 workers) in one goroutine each. Run with
// GOMAXPROCS=2 and =1 (benches/isolates/cpu.sh). Usage: spectral_norm [N]
package main

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"sync"
	"time"
)

func a(i, j int) float64 {
	ij := i + j
	return 1.0 / float64(ij*(ij+1)/2+i+1)
}

// av writes rows from..to (excluded) of A v into out. The float64
// conversions keep the compiler from fusing a multiply and an add (the Go
// spec allows it), so the sums are csp's exactly.
func av(v, out []float64, from, to int) {
	for i := from; i < to; i++ {
		s := 0.0
		for j := range v {
			s += float64(a(i, j) * v[j])
		}
		out[i] = s
	}
}

// atv writes rows from..to (excluded) of At v into out.
func atv(v, out []float64, from, to int) {
	for i := from; i < to; i++ {
		s := 0.0
		for j := range v {
			s += float64(a(j, i) * v[j])
		}
		out[i] = s
	}
}

// product runs f over all the rows: here when workers is 0, else in one
// goroutine per chunk.
func product(f func(v, out []float64, from, to int), v []float64, workers int) []float64 {
	n := len(v)
	out := make([]float64, n)
	if workers == 0 {
		f(v, out, 0, n)
		return out
	}
	var wg sync.WaitGroup
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func(i int) { defer wg.Done(); f(v, out, n*i/workers, n*(i+1)/workers) }(i)
	}
	wg.Wait()
	return out
}

func norm(n, workers int) float64 {
	u := make([]float64, n)
	for i := range u {
		u[i] = 1.0
	}
	var v []float64
	for k := 0; k < 10; k++ {
		v = product(atv, product(av, u, workers), workers)
		u = product(atv, product(av, v, workers), workers)
	}
	vbv, vv := 0.0, 0.0
	for i := 0; i < n; i++ {
		vbv += float64(u[i] * v[i])
		vv += float64(v[i] * v[i])
	}
	return math.Sqrt(vbv / vv)
}

func main() {
	n := 800
	if len(os.Args) > 1 {
		n, _ = strconv.Atoi(os.Args[1])
	}
	t0 := time.Now()
	serial := norm(n, 0)
	t1 := time.Now()
	parallel := norm(n, 2)
	t2 := time.Now()
	if serial != parallel {
		fmt.Printf("norms differ: %.9f %.9f\n", serial, parallel)
		os.Exit(1)
	}
	s, p := t1.Sub(t0), t2.Sub(t1)
	fmt.Printf("spectral-norm %d: %.9f, serial %d ms, parallel %d ms, ratio %.3f\n", n, serial, s.Milliseconds(), p.Milliseconds(), float64(p)/float64(s))
}
