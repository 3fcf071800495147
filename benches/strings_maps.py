# Strings and maps: build 200,000 words, join and split them, count them in a map,
# then rank the words by count (descending, ties alphabetical) with a comparator sort.
from functools import cmp_to_key


def main(n):
    words = []
    for i in range(n):
        words.append("w" + str((i * 7919) % 5003))
    text = " ".join(words)
    parts = text.split(" ")

    counts = {}
    total_len = 0
    for w in parts:
        total_len += len(w)
        c = counts.get(w)
        if c is None:
            counts[w] = 1
        else:
            counts[w] = c + 1

    keys = list(counts.keys())
    print("words:", len(parts), "chars:", len(text), "letters:", total_len)
    print("distinct:", len(keys))
    w9999 = counts.get("w9999")
    print("w0:", counts["w0"], "w42:", counts["w42"], "w5002:", counts["w5002"],
          "w9999:", "nil" if w9999 is None else w9999)

    def less(a, b):
        ca, cb = counts[a], counts[b]
        if ca != cb:
            return ca > cb
        return a < b

    keys.sort(key=cmp_to_key(lambda a, b: -1 if less(a, b) else (1 if less(b, a) else 0)))
    for i in range(5):
        print(f"{keys[i]} {counts[keys[i]]}")
    print("last:", keys[-1], counts[keys[-1]])


main(200000)
