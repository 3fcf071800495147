// skynet: a 10-ary tree of goroutines, 1,000,000 leaves; sums flow up unbuffered channels.
package main

import "fmt"

const (
	size = 1000000
	div  = 10
)

func skynet(out chan<- int, num, size int) {
	if size == 1 {
		out <- num
		return
	}
	rc := make(chan int)
	sub := size / div
	for i := 0; i < div; i++ {
		go skynet(rc, num+i*sub, sub)
	}
	sum := 0
	for i := 0; i < div; i++ {
		sum += <-rc
	}
	out <- sum
}

func main() {
	c := make(chan int)
	go skynet(c, 0, size)
	fmt.Println(<-c)
}
