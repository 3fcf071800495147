# String splitting: 500,000 CSV rows built with f-strings and joined into one
# 12.6 MB text, split into lines, each line split on commas; sums one numeric
# field (parsed with int), counts a boolean field and the name letters, and
# prints both ends of the text.
def main(n):
    rows = []
    for i in range(n):
        rows.append(f"{i},name{i % 1000},{(i * 7) % 10007},{'true' if i % 3 == 0 else 'false'}")
    text = "\n".join(rows)
    lines = text.split("\n")
    total = yes = letters = 0
    for line in lines:
        f = line.split(",")
        total += int(f[2])
        if f[3] == "true":
            yes += 1
        letters += len(f[1])
    print("lines:", len(lines), "chars:", len(text))
    print("total:", total, "true:", yes, "letters:", letters)
    print(lines[0])
    print(lines[-1])


main(500000)
