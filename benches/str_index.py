# Indexing strings by character: s[i] over every index and s[i:i+3] at every
# index, on an ASCII string and on one of the same length in é, 200,000
# characters, 5 rounds each. Times per kind on stderr.
import sys, time


def scan(s, rounds):
    n = len(s)
    hits = 0
    for r in range(rounds):
        for i in range(n):
            if s[i] == "é":
                hits += 1
        for i in range(n - 3):
            if s[i:i + 3] == "aéa":
                hits += 1
    return hits


def main(n, rounds):
    ascii = "abcda" * (n // 5)
    utf8 = "éééaé" * (n // 5)
    t0 = time.time()
    a = scan(ascii, rounds)
    t1 = time.time()
    u = scan(utf8, rounds)
    t2 = time.time()
    print("chars:", len(ascii), len(utf8), "hits:", a, u)
    print(f"ascii {round((t1 - t0) * 1000)} ms, utf8 {round((t2 - t1) * 1000)} ms", file=sys.stderr)


main(200000, 5)
