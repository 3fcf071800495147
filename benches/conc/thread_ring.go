// thread_ring (Benchmarks Game): 503 goroutines in a ring, a token passed 5,000,000 times.
package main

import "fmt"

const (
	fibers = 503
	n      = 5000000
)

func worker(id int, inbox <-chan int, next chan<- int, result chan<- int) {
	for {
		token := <-inbox
		if token == 0 {
			result <- id
			return
		}
		next <- token - 1
	}
}

func main() {
	result := make(chan int)
	first := make(chan int)
	inbox := first
	for id := 1; id <= fibers; id++ {
		next := first
		if id < fibers {
			next = make(chan int)
		}
		go worker(id, inbox, next, result)
		inbox = next
	}
	first <- n
	fmt.Println(<-result)
}
