// map_items.csp's pure function mapped over 10,000 items in Go: serially,
// then in 2 goroutines over the two halves of the items. Run with
// GOMAXPROCS=2 and =1 (benches/isolates/cpu.sh). Usage: map_items [ITEMS]
package main

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"
)

func f(x int) int {
	s := x
	for i := 0; i < 2000; i++ {
		s = (s*31 + i) % 1000003
	}
	return s
}

func main() {
	n := 10000
	if len(os.Args) > 1 {
		n, _ = strconv.Atoi(os.Args[1])
	}
	xs := make([]int, n)
	for i := range xs {
		xs[i] = i
	}
	t0 := time.Now()
	serial := make([]int, n)
	for i, x := range xs {
		serial[i] = f(x)
	}
	t1 := time.Now()
	const workers = 2
	parallel := make([]int, n)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(from, to int) {
			defer wg.Done()
			for i := from; i < to; i++ {
				parallel[i] = f(xs[i])
			}
		}(n*w/workers, n*(w+1)/workers)
	}
	wg.Wait()
	t2 := time.Now()
	sum := 0
	for i := range serial {
		if serial[i] != parallel[i] {
			fmt.Println("results differ at", i)
			os.Exit(1)
		}
		sum += serial[i]
	}
	s, p := t1.Sub(t0), t2.Sub(t1)
	fmt.Printf("map %d items: sum %d, serial %d ms, parallel %d ms, ratio %.3f\n", n, sum, s.Milliseconds(), p.Milliseconds(), float64(p)/float64(s))
}
