// ping_pong: 500,000 round trips over two unbuffered channels between two goroutines.
package main

import "fmt"

const N = 500000

func ponger(ping <-chan int, pong chan<- int, done chan<- struct{}) {
	for v := range ping {
		pong <- v + 1
	}
	close(done)
}

func main() {
	ping := make(chan int)
	pong := make(chan int)
	done := make(chan struct{})
	go ponger(ping, pong, done)
	n := 0
	for i := 0; i < N; i++ {
		ping <- n
		n = <-pong
	}
	close(ping)
	<-done
	fmt.Println(n)
}
