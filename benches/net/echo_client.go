// Load generator for the echo benchmark: CONNS connections, each making
// ROUNDS round trips of 64 bytes (write 64, read the 64 back) one after the
// other. Prints the seconds from the first write to the last reply and the
// round trips per second. Run with GOMAXPROCS=1 so every server gets the same
// client. Usage: echo_client HOST:PORT CONNS ROUNDS
package main

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"sync"
	"time"
)

func main() {
	addr := os.Args[1]
	conns, _ := strconv.Atoi(os.Args[2])
	rounds, _ := strconv.Atoi(os.Args[3])
	cs := make([]net.Conn, conns)
	for i := range cs {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			fmt.Fprintln(os.Stderr, "dial:", err)
			os.Exit(1)
		}
		cs[i] = c
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failed error
	start := time.Now()
	for i, c := range cs {
		wg.Add(1)
		go func(i int, c net.Conn) {
			defer wg.Done()
			msg := bytes.Repeat([]byte{byte('a' + i%26)}, 64)
			buf := make([]byte, 64)
			for r := 0; r < rounds; r++ {
				if _, err := c.Write(msg); err != nil {
					mu.Lock()
					failed = err
					mu.Unlock()
					return
				}
				if _, err := io.ReadFull(c, buf); err != nil || !bytes.Equal(buf, msg) {
					mu.Lock()
					failed = fmt.Errorf("round %d: bad echo (%v)", r, err)
					mu.Unlock()
					return
				}
			}
		}(i, c)
	}
	wg.Wait()
	secs := time.Since(start).Seconds()
	if failed != nil {
		fmt.Fprintln(os.Stderr, "echo:", failed)
		os.Exit(1)
	}
	for _, c := range cs {
		c.Close()
	}
	fmt.Printf("%.3f %.0f\n", secs, float64(conns*rounds)/secs)
}
