# grep: read FILE line by line and count the lines that contain WORD.
#   python3 grep.py FILE WORD
import sys

file, word = sys.argv[1], sys.argv[2]
lines = 0
hits = 0
for line in open(file, encoding="utf-8"):
    lines += 1
    if word in line:
        hits += 1
print(f"{lines} lines, {hits} contain {word}")
