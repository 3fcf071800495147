// Go beside chan_roundtrip.csp: N round trips between two goroutines over
// two unbuffered channels, and N values streamed one way through a chan of
// 256. Run with GOMAXPROCS=2 (the goroutines on two threads, as two isolates)
// and =1. Prints microseconds. Usage: go run messages.go [N]
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

func main() {
	n := 20000
	if len(os.Args) > 1 {
		n, _ = strconv.Atoi(os.Args[1])
	}
	a, b := make(chan int), make(chan int)
	go func() {
		for v := range a {
			b <- v
		}
	}()
	t := time.Now()
	for i := 0; i < n; i++ {
		a <- i
		<-b
	}
	rt := float64(time.Since(t).Microseconds()) / float64(n)
	close(a)
	c, done := make(chan int, 256), make(chan int)
	go func() {
		count := 0
		for range c {
			count++
		}
		done <- count
	}()
	t = time.Now()
	for i := 0; i < n; i++ {
		c <- i
	}
	close(c)
	<-done
	stream := float64(time.Since(t).Microseconds()) / float64(n)
	fmt.Printf("round trip %.2f us, streamed %.2f us/value\n", rt, stream)
}
