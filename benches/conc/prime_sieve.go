// prime_sieve: Go's classic concurrent prime sieve; prints the 2000th prime.
package main

import "fmt"

const count = 2000

func generate(out chan<- int) {
	for i := 2; ; i++ {
		out <- i
	}
}

func filter(in <-chan int, out chan<- int, prime int) {
	for {
		i := <-in
		if i%prime != 0 {
			out <- i
		}
	}
}

func main() {
	ch := make(chan int)
	go generate(ch)
	prime := 0
	for i := 0; i < count; i++ {
		prime = <-ch
		next := make(chan int)
		go filter(ch, next, prime)
		ch = next
	}
	fmt.Println(prime)
}
