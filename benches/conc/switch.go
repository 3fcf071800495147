// switch: two goroutines alternate with runtime.Gosched(), 500,000 each (meant to be run
// with GOMAXPROCS=1, where every Gosched switches to the other goroutine).
package main

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
)

const perFiber = 500000

var switches int64

func bouncer(wg *sync.WaitGroup) {
	defer wg.Done()
	for i := 0; i < perFiber; i++ {
		atomic.AddInt64(&switches, 1) // atomic so the GOMAXPROCS>1 run is race-free too
		runtime.Gosched()
	}
}

func main() {
	var wg sync.WaitGroup
	wg.Add(2)
	go bouncer(&wg)
	go bouncer(&wg)
	wg.Wait()
	fmt.Println(switches)
}
