# switch: 1,000,000 generator send/yield pairs. A generator yields i for i in
# 0..1000000 and the driver sums the values; prints the sum (499999500000).
N = 1000000


def gen_body():
    for i in range(N):
        yield i


def main():
    gen = gen_body()
    total = 0
    send = gen.send
    try:
        v = send(None)
        while True:
            total += v
            v = send(None)
    except StopIteration:
        pass
    print(total)


main()
