// HTTP hello world on net/http. Usage: http_hello HOST:PORT
package main

import (
	"net/http"
	"os"
)

func main() {
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Write([]byte("Hello, World!"))
	})
	if err := http.ListenAndServe(os.Args[1], nil); err != nil {
		panic(err)
	}
}
