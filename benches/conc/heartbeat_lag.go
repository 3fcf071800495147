// heartbeat_lag: a heartbeat goroutine wakes every 10 ms and records how late it woke,
// while main computes 5,000,000 iterations of sin(x)*cos(x)+sqrt(abs(x)). With
// GOMAXPROCS=1 the heartbeat depends on Go's asynchronous preemption of the loop.
// Lines starting with "# " are timing-dependent and not compared.
package main

import (
	"fmt"
	"math"
	"time"
)

const (
	n      = 5000000
	period = 10 * time.Millisecond
)

func fixed3(s float64) string {
	k := int64(s * 1000)
	return fmt.Sprintf("%d.%03d", k/1000, k%1000)
}

func compute(n int) float64 {
	s := 0.0
	for i := 0; i < n; i++ {
		x := float64(i) * 0.001
		s += math.Sin(x)*math.Cos(x) + math.Sqrt(math.Abs(x))
	}
	return s
}

type stats struct {
	beats  int
	maxLag time.Duration
}

func heartbeat(stop <-chan struct{}, st *stats, done chan<- struct{}) {
	defer close(done)
	for {
		expected := time.Now().Add(period)
		select {
		case <-stop:
			return
		case <-time.After(period):
		}
		lag := time.Since(expected)
		st.beats++
		if lag > st.maxLag {
			st.maxLag = lag
		}
	}
}

func main() {
	var st stats
	stop := make(chan struct{})
	done := make(chan struct{})
	go heartbeat(stop, &st, done)
	s := compute(n)
	close(stop)
	<-done
	fmt.Println(fixed3(s))
	fmt.Printf("# beats %d\n", st.beats)
	fmt.Printf("# max_lag_ms %d\n", st.maxLag.Milliseconds())
}
