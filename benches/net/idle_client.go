// Idle-connections client: opens CONNS connections (at most 64 being set up at
// once, so the listen backlog never overflows), sends 64 bytes on each and
// waits for the echo, then prints "ready" and holds them all until stdin
// closes. Usage: idle_client HOST:PORT CONNS
package main

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"sync"
)

func main() {
	addr := os.Args[1]
	n, _ := strconv.Atoi(os.Args[2])
	cs := make([]net.Conn, n)
	sem := make(chan struct{}, 64)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failed error
	msg := bytes.Repeat([]byte("x"), 64)
	for i := range cs {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer func() { <-sem; wg.Done() }()
			c, err := net.Dial("tcp", addr)
			if err == nil {
				_, err = c.Write(msg)
			}
			if err == nil {
				buf := make([]byte, 64)
				_, err = io.ReadFull(c, buf)
			}
			if err != nil {
				mu.Lock()
				failed = err
				mu.Unlock()
				return
			}
			cs[i] = c
		}(i)
	}
	wg.Wait()
	if failed != nil {
		fmt.Fprintln(os.Stderr, "idle:", failed)
		os.Exit(1)
	}
	fmt.Println("ready")
	io.Copy(io.Discard, os.Stdin)
	for _, c := range cs {
		c.Close()
	}
}
