# walk: every entry under ROOT (symbolic links not followed); prints the
# number of files and directories and the files' total size in bytes.
#   python3 walk.py ROOT
import os
import sys

files = dirs = size = 0


def visit(path):
    global files, dirs, size
    with os.scandir(path) as it:
        entries = sorted(it, key=lambda e: e.name)
    for e in entries:
        if e.is_dir(follow_symlinks=False):
            dirs += 1
            visit(e.path)
        elif e.is_file(follow_symlinks=False):
            files += 1
            size += e.stat(follow_symlinks=False).st_size


visit(sys.argv[1])
print(f"{files} files, {dirs} dirs, {size} bytes")
