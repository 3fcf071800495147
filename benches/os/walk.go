// walk: every entry under ROOT (symbolic links not followed); prints the
// number of files and directories and the files' total size in bytes.
//
//	walk ROOT
package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

func main() {
	root := os.Args[1]
	files, dirs, bytes := 0, 0, int64(0)
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if path == root {
			return nil
		}
		switch {
		case d.Type().IsRegular():
			info, err := d.Info() // lstat
			if err != nil {
				return err
			}
			files++
			bytes += info.Size()
		case d.IsDir():
			dirs++
		}
		return nil
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("%d files, %d dirs, %d bytes\n", files, dirs, bytes)
}
