# A tight counted loop with integer multiply, modulo and accumulate.
def main():
    total = 0
    for i in range(30000000):
        total += (i * i) % 7
    print(total)


main()
