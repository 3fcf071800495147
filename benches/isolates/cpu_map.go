// The same two calls in Go: one after the other, then in two goroutines.
package main

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"
)

func work(n int) int {
	s := 0
	for i := 0; i < n; i++ {
		s = (s + i*i) % 1000003
	}
	return s
}

func main() {
	n := 20000000
	if len(os.Args) > 1 {
		n, _ = strconv.Atoi(os.Args[1])
	}
	t0 := time.Now()
	a, b := work(n), work(n)
	t1 := time.Now()
	var r [2]int
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func(i int) { defer wg.Done(); r[i] = work(n) }(i)
	}
	wg.Wait()
	t2 := time.Now()
	if a != r[0] || b != r[1] {
		panic("results differ")
	}
	s, p := t1.Sub(t0), t2.Sub(t1)
	fmt.Printf("serial %d ms, goroutines %d ms, ratio %.3f\n", s.Milliseconds(), p.Milliseconds(), float64(p)/float64(s))
}
