# String building: 1,000,000 appends of short words with `s += w`, then the
# length and both ends of the result. Inside a function: CPython appends in
# place only to a local with no other reference (at module level the same loop
# is quadratic, over a minute here).
def main():
    words = ["alpha", "be", "gamma", "d", "epsilon", "zeta", "eta"]
    s = ""
    for i in range(1000000):
        s += words[i % 7]
    print(len(s))
    print(s[0:24])
    print(s[len(s) - 24:])


main()
