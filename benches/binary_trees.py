# The Benchmarks Game binary-trees, depth 16: allocation and GC pressure.
# A node is a list [left, right]; a leaf is [None, None].
def make(depth):
    if depth == 0:
        return [None, None]
    return [make(depth - 1), make(depth - 1)]


def check(node):
    if node[0] is None:
        return 1
    return 1 + check(node[0]) + check(node[1])


def main(n):
    min_depth = 4
    max_depth = n
    if min_depth + 2 > n:
        max_depth = min_depth + 2

    stretch = max_depth + 1
    print(f"stretch tree of depth {stretch}\t check: {check(make(stretch))}")

    long_lived = make(max_depth)

    depth = min_depth
    while depth <= max_depth:
        iterations = 2 ** (max_depth - depth + min_depth)
        total = 0
        for _ in range(iterations):
            total += check(make(depth))
        print(f"{iterations}\t trees of depth {depth}\t check: {total}")
        depth += 2

    print(f"long lived tree of depth {max_depth}\t check: {check(long_lived)}")


main(16)
