// grep: read FILE line by line and count the lines that contain WORD.
//
//	grep FILE WORD
package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
)

func main() {
	f, err := os.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer f.Close()
	word := []byte(os.Args[2])
	lines, hits := 0, 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1<<30)
	for sc.Scan() {
		lines++
		if bytes.Contains(sc.Bytes(), word) {
			hits++
		}
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("%d lines, %d contain %s\n", lines, hits, os.Args[2])
}
