// shapes: the peer of shapes.csp (see there): what a program keeps, in one of
// five shapes, while a heartbeat records its lag. Go's collector is concurrent
// and incremental; run with GOMAXPROCS=1 it shares the one core with the program.
package main

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"time"
)

const (
	churn  = 2000000
	period = 5 * time.Millisecond
)

type item struct {
	v int
	s string
}

type pair struct {
	v    int
	next *pair
}

type rec struct {
	id   int
	name string
	next any
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

func newItem(i int) *item { return &item{i, "s" + strconv.Itoa(i%1000)} }

// keepAll returns what is kept and its length.
func keepAll(shape string, live int) (any, int) {
	switch shape {
	case "list":
		var keep []*item
		for i := 0; i < live; i++ {
			keep = append(keep, newItem(i))
		}
		return keep, len(keep)
	case "prealloc":
		keep := make([]*item, live)
		for i := 0; i < live; i++ {
			keep[i] = newItem(i)
		}
		return keep, len(keep)
	case "ints":
		var keep []int
		for i := 0; i < live; i++ {
			keep = append(keep, i)
		}
		return keep, len(keep)
	case "map":
		keep := map[int]*item{}
		for i := 0; i < live; i++ {
			keep[i] = newItem(i)
		}
		return keep, len(keep)
	}
	var chain *pair
	for i := 0; i < live; i++ {
		chain = &pair{i, chain}
	}
	return chain, 1
}

func main() {
	shape, live := "list", 3000000
	if len(os.Args) > 1 {
		shape = os.Args[1]
	}
	if len(os.Args) > 2 {
		live, _ = strconv.Atoi(os.Args[2])
	}
	stop := make(chan struct{})
	done := make(chan []float64)
	go heartbeat(stop, done)
	keep, n := keepAll(shape, live)
	sum := 0
	for i := 0; i < churn; i++ {
		m := &rec{i, "m", keep}
		sink = m
		sum += m.id % 7
	}
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
