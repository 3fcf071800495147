// spawn: start `true` 2,000 times with at most 16 running at once and wait for
// every one. Prints how many exited with status 0.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"sync"
)

const n = 2000
const inflight = 16

func main() {
	slots := make(chan struct{}, inflight)
	ok := make([]bool, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		slots <- struct{}{}
		go func(i int) {
			defer wg.Done()
			cmd := exec.Command("true")
			cmd.Stderr = os.Stderr
			ok[i] = cmd.Run() == nil
			<-slots
		}(i)
	}
	wg.Wait()
	count := 0
	for _, b := range ok {
		if b {
			count++
		}
	}
	fmt.Printf("%d started, %d ok\n", n, count)
}
