// gc_pause: the peer of gc_pause.csp (see there). Go's collector is concurrent
// and incremental; with GOMAXPROCS=1 it shares the one core with the program.
package main

import (
	"fmt"
	"sort"
	"time"
)

const (
	live   = 3000000
	churn  = 2000000
	period = 5 * time.Millisecond
)

type pair struct {
	v    int
	next *pair
}

type rec struct {
	id   int
	name string
	next *pair
}

var sink *rec

func heartbeat(stop chan struct{}, done chan []float64) {
	var lags []float64
	for {
		expected := time.Now().Add(period)
		select {
		case <-stop:
			done <- lags
			return
		case <-time.After(period):
		}
		lags = append(lags, float64(time.Since(expected).Microseconds())/1000)
	}
}

func work() (int, int) {
	var chain *pair
	for i := 0; i < live; i++ {
		chain = &pair{i, chain}
	}
	sum := 0
	for i := 0; i < churn; i++ {
		m := &rec{i, "m", chain}
		sink = m
		sum += m.id % 7
	}
	n := 0
	for ; chain != nil; chain = chain.next {
		n++
	}
	return n, sum
}

func main() {
	stop := make(chan struct{})
	done := make(chan []float64)
	go heartbeat(stop, done)
	n, sum := work()
	close(stop)
	lags := <-done
	fmt.Println(n, sum)
	sort.Float64s(lags)
	pct := func(p int) float64 { return lags[(len(lags)-1)*p/100] }
	fmt.Printf("# beats %d\n", len(lags))
	fmt.Printf("# p50_ms %g\n", pct(50))
	fmt.Printf("# p99_ms %g\n", pct(99))
	fmt.Printf("# max_ms %g\n", lags[len(lags)-1])
}
