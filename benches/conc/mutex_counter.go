// mutex_counter: 1000 goroutines × 1000 increments of a shared counter under a
// sync.Mutex, with runtime.Gosched() inside the critical section.
package main

import (
	"fmt"
	"runtime"
	"sync"
)

const (
	fibers     = 1000
	increments = 1000
)

var (
	counter int
	m       sync.Mutex
)

func worker(wg *sync.WaitGroup) {
	defer wg.Done()
	for i := 0; i < increments; i++ {
		m.Lock()
		v := counter
		runtime.Gosched()
		counter = v + 1
		m.Unlock()
	}
}

func main() {
	var wg sync.WaitGroup
	wg.Add(fibers)
	for i := 0; i < fibers; i++ {
		go worker(&wg)
	}
	wg.Wait()
	fmt.Println(counter)
}
